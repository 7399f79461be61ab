"""Sending a person a message: a write tool that takes a recipient e-mail and a subject or body.

A message tool is any write of the library (implemented, action or simulated) with an argument of
semantic ``email`` named like a recipient (``to``, ``recipient``, ``email``) and a text argument
for the subject or body, whose other required arguments the scenario can leave out. The recipient
is the e-mail the opening found (a binding), never stated in the instruction; subject and body are
quoted, so the grader can check the message (a simulated send lands in the action log).

A text message works the same way by phone: a recipient argument of semantic ``phone`` (or named like
a mobile number), or a list of recipient objects with such a field (``recipients: [{mobileNumber}]``);
the number is the one the party row the opening found holds, bound from that listing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compoworld.manifest import ServiceManifest, ToolDef
from orchestrator.tasks.rejected import DraftRejected
from orchestrator.tasks.scenario.scene import Scene, system_name
from orchestrator.tasks.scenario.world import World

__all__ = ["MessageTool", "message_tools", "send_message", "service_message_tools"]

_RECIPIENT = ("to", "recipient", "recipients", "email", "emailaddress", "address")
_SUBJECT = ("subject", "title")
_BODY = ("textbody", "body", "text", "message", "messagecontent", "content")


_PHONE_FIELDS = ("mobilenumber", "mobile", "phone", "phonenumber", "msisdn", "to", "number", "destination")


@dataclass(frozen=True)
class MessageTool:
    """A write tool that sends a message, and which arguments carry recipient, subject and body.

    ``recipient`` is a dotted argument path (``to``; ``recipients.0.mobileNumber``: one item of a list);
    ``channel`` says whether it takes an e-mail address or a phone number.
    """

    service: str
    tool: ToolDef
    recipient: str
    subject: str | None
    body: str | None
    channel: str = "email"

    def arguments(self, recipient: str) -> dict[str, Any]:
        head, _, rest = self.recipient.partition(".")
        if not rest:
            return {head: recipient}
        _, _, field = rest.partition(".")
        return {head: [{field: recipient}]}


def _plain(name: str) -> str:
    return name.lower().replace("_", "")


def message_tools(world: World) -> list[MessageTool]:
    """The tools that send a person a message by e-mail address (found once per world)."""
    key = ("message_tools", "", "")
    if key not in world.derived:
        world.derived[key] = _message_tools(world)
    return list(world.derived[key])


def _message_tools(world: World) -> list[MessageTool]:
    return [m for s in sorted(world.runtimes) for m in service_message_tools(s, world.runtimes[s].manifest)]


def service_message_tools(service: str, manifest: ServiceManifest) -> list[MessageTool]:
    """The message tools of one service, in tool order (a world indexed by streaming asks each service
    while it is loaded; ``message_tools`` is these over the services in name order)."""
    out: list[MessageTool] = []
    for tool in manifest.tools:
        if tool.kind != "write" or tool.operation in ("delete", "update"):
            continue
        props = tool.input_schema.get("properties") or {}
        emails = [a for a, s in sorted(tool.arg_semantics.items()) if s == "email" and a in props]
        recipient = next((a for a in emails if _plain(a) in _RECIPIENT), None)
        channel = "email"
        if recipient is None:
            recipient, channel = _phone_recipient(tool, props), "phone"
        strings = [a for a in sorted(props) if (props[a] or {}).get("type") == "string"]
        subject = next((a for a in strings if _plain(a) in _SUBJECT), None)
        body = next((a for a in strings if _plain(a) in _BODY), None)
        head = recipient.split(".", 1)[0] if recipient else None
        required = set(tool.input_schema.get("required") or []) - {head, subject, body}
        if recipient is None or (subject is None and body is None) or required:
            continue
        out.append(MessageTool(service, tool, recipient, subject, body, channel))
    return out


def _phone_recipient(tool: ToolDef, props: dict[str, Any]) -> str | None:
    """The argument path of a phone-number recipient: a string argument of semantic ``phone`` named like a
    recipient, or a field named like a mobile number in the items of a recipient list."""
    for arg in sorted(props):
        schema = props[arg] or {}
        phone = schema.get("type") == "string" and tool.arg_semantics.get(arg) == "phone"
        if phone and _plain(arg) in (*_RECIPIENT, *_PHONE_FIELDS):
            return arg
        items = schema.get("items") or {} if schema.get("type") == "array" else {}
        if _plain(arg) in _RECIPIENT and items.get("type") == "object":
            fields = items.get("properties") or {}
            required = set(items.get("required") or [])
            for name in sorted(fields):
                typed = (fields[name] or {}).get("type") == "string"
                if _plain(name) in _PHONE_FIELDS and typed and required <= {name}:
                    return f"{arg}.0.{name}"
    return None


async def send_message(scene: Scene) -> str:
    """Send the scene's person a short message in a service not used yet; the sentence that asks for it."""
    phone = scene.phone()
    tools = [m for m in message_tools(scene.world) if m.channel == "email" or phone is not None]
    fresh = [m for m in tools if m.service not in scene.draft.services] or tools
    if not fresh:
        raise DraftRejected("no tool sends the person a message")
    chosen = scene.draw(fresh, lambda m: m.service)
    subject = f"Your account with us, {scene.first_name}"
    body = f"Hello {scene.first_name}, we have reviewed your account and will be in touch shortly"
    system = system_name(scene.world, chosen.service)
    if chosen.channel == "phone":
        assert phone is not None
        number, ref = phone
        args: dict[str, Any] = chosen.arguments(number)
        if chosen.body:
            args[chosen.body] = body
        scene.draft.stated.append(body)
        scene.draft.hidden.append(number)
        await scene.draft.call(chosen.service, chosen.tool, args, {chosen.recipient: ref})
        scene.draft.labels.add("write")
        where = scene.system(scene.subject.party)
        return f'Then text {scene.first_name} through {system} at the phone number {where} has for them: "{body}".'
    args = {chosen.recipient: scene.person.email}
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
    return (
        f"Then send {scene.first_name} a message through {system} at the e-mail address you found, "
        f"with {' and '.join(parts)}."
    )
