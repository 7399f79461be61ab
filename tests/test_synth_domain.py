"""Domain labels come from the service's own name and title before the corpus's coarse categories."""

from __future__ import annotations

import pytest

from compoworld.synth.domain import infer_domain


@pytest.mark.parametrize(
    ("name", "title", "categories", "domain"),
    [
        ("crm", "CRM API", ["developer_tools"], "crm"),
        ("google_calendar", "Calendar API", ["analytics"], "calendar"),
        ("telstra_messaging", "Messaging API v3.x", ["telecom"], "messaging"),
        ("postmark", "Postmark API", ["email"], "email"),
        ("impala_hotels", "Impala Hotel Booking API", ["ecommerce"], "travel"),
        ("weather", "Weather API", ["open_data"], "open_data"),
        ("x", "", [], "general"),
    ],
)
def test_domain_is_inferred_from_name_title_then_categories(
    name: str, title: str, categories: list[str], domain: str
) -> None:
    assert infer_domain(name, title, categories) == domain
