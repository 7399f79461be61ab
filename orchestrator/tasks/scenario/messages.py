"""Sending a person a message: a write tool that takes a recipient e-mail and a subject or body.

A message tool is any write of the library (implemented, action or simulated) with an argument of
semantic ``email`` named like a recipient (``to``, ``recipient``, ``email``) and a text argument
for the subject or body, whose other required arguments the scenario can leave out. The recipient
is the e-mail the opening found (a binding), never stated in the instruction; subject and body are
quoted, so the grader can check the message (a simulated send lands in the action log).
"""

from __future__ import annotations

from dataclasses import dataclass

from compoworld.manifest import ToolDef
from orchestrator.tasks.rejected import DraftRejected
from orchestrator.tasks.scenario.scene import Scene, system_name
from orchestrator.tasks.scenario.world import World

__all__ = ["MessageTool", "message_tools", "send_message"]

_RECIPIENT = ("to", "recipient", "recipients", "email", "emailaddress", "address")
_SUBJECT = ("subject", "title")
_BODY = ("textbody", "body", "text", "message", "messagecontent", "content")


@dataclass(frozen=True)
class MessageTool:
    """A write tool that sends a message, and which arguments carry recipient, subject and body."""

    service: str
    tool: ToolDef
    recipient: str
    subject: str | None
    body: str | None


def _plain(name: str) -> str:
    return name.lower().replace("_", "")


def message_tools(world: World) -> list[MessageTool]:
    """The tools that send a person a message by e-mail address (found once per world)."""
    key = ("message_tools", "", "")
    if key not in world.derived:
        world.derived[key] = _message_tools(world)
    return list(world.derived[key])


def _message_tools(world: World) -> list[MessageTool]:
    out: list[MessageTool] = []
    for service in sorted(world.runtimes):
        for tool in world.runtimes[service].manifest.tools:
            if tool.kind != "write" or tool.operation in ("delete", "update"):
                continue
            props = tool.input_schema.get("properties") or {}
            emails = [a for a, s in sorted(tool.arg_semantics.items()) if s == "email" and a in props]
            recipient = next((a for a in emails if _plain(a) in _RECIPIENT), None)
            strings = [a for a in sorted(props) if (props[a] or {}).get("type") == "string"]
            subject = next((a for a in strings if _plain(a) in _SUBJECT), None)
            body = next((a for a in strings if _plain(a) in _BODY), None)
            required = set(tool.input_schema.get("required") or []) - {recipient, subject, body}
            if recipient is None or (subject is None and body is None) or required:
                continue
            out.append(MessageTool(service, tool, recipient, subject, body))
    return out


async def send_message(scene: Scene) -> str:
    """Send the scene's person a short message in a service not used yet; the sentence that asks for it."""
    tools = message_tools(scene.world)
    fresh = [m for m in tools if m.service not in scene.draft.services] or tools
    if not fresh:
        raise DraftRejected("no tool sends a message to an e-mail address")
    chosen = scene.draft.rng.choice(fresh)
    subject = f"Your account with us, {scene.first_name}"
    body = f"Hello {scene.first_name}, we have reviewed your account and will be in touch shortly"
    args: dict[str, str] = {chosen.recipient: scene.person.email}
    parts = []
    if chosen.subject:
        args[chosen.subject] = subject
        parts.append(f'the subject "{subject}"')
        scene.draft.stated.append(subject)
    if chosen.body:
        args[chosen.body] = body
        parts.append(f'the text "{body}"')
        scene.draft.stated.append(body)
    await scene.draft.call(chosen.service, chosen.tool, dict(args), {chosen.recipient: scene.email_ref})
    scene.draft.labels.add("write")
    system = system_name(scene.world, chosen.service)
    return (
        f"Then send {scene.first_name} a message through {system} at the e-mail address you found, "
        f"with {' and '.join(parts)}."
    )
