"""Ask a ModelService one question with the OpenAI Python SDK and print the answer as it streams.

    python3 chat.py URL MODEL

URL is the service's address (its status.address), MODEL the name its engines serve
(their --served-model-name).
"""
import sys

from openai import OpenAI

url, model = sys.argv[1], sys.argv[2]
# The service answers the OpenAI API under its address; the SDK adds /chat/completions.
# The gateway asks for no key, but the SDK wants one: any string will do.
client = OpenAI(base_url=f"{url}/v1", api_key="none")
stream = client.chat.completions.create(
    model=model,
    messages=[{"role": "user", "content": "Say hello in five words."}],
    max_tokens=64,
    stream=True,
)
finish = None
for chunk in stream:
    if not chunk.choices:
        continue
    choice = chunk.choices[0]
    print(choice.delta.content or "", end="", flush=True)
    finish = choice.finish_reason or finish
print()
print(f"model={chunk.model} finish_reason={finish}")
