"""Offline batch inference with SGLang's engine and a 4-bit KV cache."""

import sglang as sgl


def main() -> None:
    llm = sgl.Engine(
        model_path="Qwen/Qwen3-8B",
        kv_cache_dtype="nvfp4",
        mem_fraction_static=0.85,
    )
    prompts = ["The capital of France is", "The largest planet is"]
    for out in llm.generate(prompts, {"temperature": 0, "max_new_tokens": 32}):
        print(out["text"])
    llm.shutdown()


if __name__ == "__main__":
    main()
