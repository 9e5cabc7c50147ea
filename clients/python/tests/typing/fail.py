"""Calls that must NOT type-check: every line marked `# E` must get a mypy error, and no other line
(tests/test_types.py). Never run."""

from __future__ import annotations

from mediaforge import AsyncMediaforge, Mediaforge
from mediaforge._generated.models import VendorDFamilyDReferenceToVideoInput

client = Mediaforge(api_key="sk-service-types", base_url="http://127.0.0.1:1")
aclient = AsyncMediaforge(api_key="sk-service-types", base_url="http://127.0.0.1:1")


def compile_only() -> None:
    # family_d has no seed field
    client.tasks.create(model="vendor_d/family_d/reference-to-video", input={"prompt": "x", "reference_image_urls": ["https://example.com/a.png"], "seed": 7})  # E
    # 1080p is not one of family_d's resolutions (768p, 2k)
    client.tasks.create(model="vendor_d/family_d/reference-to-video", input={"prompt": "x", "reference_image_urls": ["https://example.com/a.png"], "resolution": "1080p"})  # E
    # shot_type exists on vendor_c/o3 only
    client.tasks.create(model="vendor_b/family_c-2.6/reference-to-video", input={"prompt": "x", "shot_type": "customize"})  # E
    # enable_prompt_expansion accepts only False on family_d
    client.tasks.create(model="vendor_d/family_d/reference-to-video", input={"prompt": "x", "reference_image_urls": ["https://example.com/a.png"], "enable_prompt_expansion": True})  # E
    # an unknown model id
    client.tasks.create(model="vendor_z/nothing/reference-to-video", input={"prompt": "x"})  # E
    # a required field left out (reference_image_urls)
    client.tasks.quote(model="vendor_d/family_d/reference-to-video", input={"prompt": "x"})  # E
    # duration_seconds is an integer field, not a string
    wrong: VendorDFamilyDReferenceToVideoInput = {"prompt": "x", "reference_image_urls": [], "duration_seconds": "5"}  # E
    # a task record has no such key
    print(client.tasks.get("t")["no_such_field"], wrong)  # E


async def async_compile_only() -> None:
    # 8k is not a q4-preview resolution, on the async client too
    await aclient.tasks.quote(model="vendor_e/q4-preview/reference-to-video", input={"prompt": "x", "reference_image_urls": ["https://example.com/a.png"], "resolution": "8k"})  # E
