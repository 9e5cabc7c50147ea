"""Calls that must type-check (mypy --strict; tests/test_types.py). Never run."""

from __future__ import annotations

from mediaforge import AsyncMediaforge, Mediaforge, TaskRecord
from mediaforge._generated.models import VendorDFamilyDReferenceToVideoInput

client = Mediaforge(api_key="sk-service-types", base_url="http://127.0.0.1:1")


def compile_only() -> None:
    task: TaskRecord = client.tasks.create(
        model="vendor_d/family_d/reference-to-video",
        input={"prompt": "The cat of Picture 1 jumps.", "reference_image_urls": ["https://example.com/cat.png"], "resolution": "2k", "duration_seconds": 8, "aspect_ratio": "21:9"},
        callback_url="https://example.com/hooks",
        idempotency_key="k-1",
        wait=30,
    )
    state: str = task["state"]
    client.tasks.create(model="vendor_c/o3/reference-to-video", input={"prompt": "x", "reference_image_urls": ["https://example.com/a.png"], "shot_type": "customize", "resolution": "4k"})
    client.tasks.create(model="vendor_a/family_a-2.0-mini/reference-to-video", input={"prompt": "x", "seed": 7, "duration_seconds": -1, "enable_web_search": True})
    client.tasks.create(model="vendor_d/family_d-lora/reference-to-video", input={"prompt": "x", "loras": [{"path": "https://example.com/a.safetensors"}]})
    quote = client.tasks.quote(model="vendor_e/q4-preview/reference-to-video", input={"prompt": "x", "reference_image_urls": ["https://example.com/a.png"]})
    credits: int = quote["estimatedCredits"]
    kept: VendorDFamilyDReferenceToVideoInput = {"prompt": "x", "reference_image_urls": ["https://example.com/a.png"]}
    client.tasks.create_and_wait(model="vendor_d/family_d/reference-to-video", input=kept, timeout=120)
    for listed in client.tasks.list(state="succeeded"):
        print(listed["taskId"], state, credits)
    print(client.credit.get()["available"], client.account.usage()["byDay"])


async def async_compile_only() -> None:
    async with AsyncMediaforge(api_key="sk-service-types", base_url="http://127.0.0.1:1") as aclient:
        task = await aclient.tasks.create(model="vendor_d/family_d/reference-to-video", input={"prompt": "x", "reference_image_urls": ["https://example.com/a.png"]})
        done: TaskRecord = await aclient.tasks.wait_for(task, timeout=60)
        async for listed in aclient.tasks.list():
            print(listed["taskId"], done["state"])
