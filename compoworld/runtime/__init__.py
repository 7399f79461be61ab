"""What every generated service runs on: state forks, dispatcher, world model, HTTP app."""

from compoworld.runtime.app import create_library_app, create_service_app
from compoworld.runtime.service import ServiceRuntime, load_library
from compoworld.runtime.state import canonical_hash

__all__ = ["ServiceRuntime", "canonical_hash", "create_library_app", "create_service_app", "load_library"]
