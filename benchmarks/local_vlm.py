"""Local VLM detector speed against the hardware: prefill and decode as shares of their floors.

    python -m benchmarks.local_vlm [--batches 1,2,4,8,16,32,64] [--variants dynamic,static]
    python -m benchmarks.local_vlm --smoke          # a tiny model on CPU, seconds

A randomly initialised model of Qwen2-VL-2B's shape (config written here, nothing downloaded; its
answers are noise, its speed is the real model's) gets synthetic inputs shaped like the detector's:
``--prompt-tokens`` text tokens and one ``--image`` x ``--image`` picture per sample. For each batch
size and variant it reports:

- prefill: tokens/s and FLOP/s, as a share of the bf16 matrix-product rate measured in the same run
  (``--matmul`` cube); the FLOPs are counted from the shapes (weights, attention, vision tower);
- decode: milliseconds per step and tokens/s; the floor of a step is reading the language model's
  weights once at the device-to-device copy bandwidth measured in the same run (the KV cache is extra);
- samples/s of a whole ``generate`` of ``--new-tokens`` tokens (the detector's answers are ~150).

Variants: ``dynamic`` is plain ``generate``; ``static`` is ``cache_implementation="static"``, which
``transformers`` compiles with ``torch.compile`` (CUDA graphs) on a GPU: the detector's
``static_cache=true`` option. The first static call per batch size compiles (minutes on a 2B model);
that warm-up is not timed. On CPU the default is the smoke run. Writes
``benchmarks/results/local_vlm-<device>.json``.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from benchmarks import RESULTS, arguments, goal, load, save

IMAGE_PAD, VIDEO_PAD, VISION_START, VISION_END = 151655, 151656, 151652, 151653


def qwen2_vl_config(smoke: bool):
    """Qwen2-VL-2B-Instruct's architecture (config.json of the release), or a tiny one for ``--smoke``."""
    from transformers import Qwen2VLConfig

    if smoke:
        text = {"vocab_size": 151936, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2}
        text |= {"num_attention_heads": 4, "num_key_value_heads": 2}
        vision = {"depth": 2, "embed_dim": 64, "num_heads": 4}
        mrope = [2, 3, 3]
    else:
        text = {"vocab_size": 151936, "hidden_size": 1536, "intermediate_size": 8960, "num_hidden_layers": 28}
        text |= {"num_attention_heads": 12, "num_key_value_heads": 2}
        vision = {"depth": 32, "embed_dim": 1280, "num_heads": 16}
        mrope = [16, 24, 24]
    text |= {
        "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-6,
        "rope_parameters": {"rope_type": "default", "rope_theta": 1e6, "mrope_section": mrope},
        "tie_word_embeddings": True,
        "bos_token_id": 151643,
        "eos_token_id": 151645,
    }
    vision |= {
        "hidden_size": text["hidden_size"],
        "mlp_ratio": 4,
        "patch_size": 14,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "in_channels": 3,
        "hidden_act": "quick_gelu",
    }
    return Qwen2VLConfig(
        text_config=text,
        vision_config=vision,
        image_token_id=IMAGE_PAD,
        video_token_id=VIDEO_PAD,
        vision_start_token_id=VISION_START,
        vision_end_token_id=VISION_END,
        tie_word_embeddings=True,
    )


def build(model_class, config, device: str, dtype):
    """A ``model_class`` model randomly initialised (seed 0) directly on ``device`` in ``dtype``, in eval
    mode."""
    import torch

    torch.manual_seed(0)
    with torch.device(device):
        model = model_class._from_config(config, dtype=dtype)
    return model.eval()


def build_model(config, device: str, dtype):
    """The Qwen2-VL model, randomly initialised, with the real model's padding and end tokens."""
    from transformers import Qwen2VLForConditionalGeneration

    model = build(Qwen2VLForConditionalGeneration, config, device, dtype)
    model.generation_config.pad_token_id = 151643
    model.generation_config.eos_token_id = 151645
    return model.eval()


def make_inputs(config, batch: int, prompt_tokens: int, image: int, device: str, dtype) -> dict:
    """``batch`` prompts of ``prompt_tokens`` text tokens with one ``image`` x ``image`` picture each, as
    the Qwen2-VL processor would give them (flattened patches, grid sizes, image placeholders)."""
    import torch

    v = config.vision_config
    side = image // v.patch_size // v.spatial_merge_size * v.spatial_merge_size
    n_patches = side * side
    n_image_tokens = n_patches // v.spatial_merge_size**2
    generator = torch.Generator().manual_seed(batch)
    text = torch.randint(1000, 150000, (batch, prompt_tokens), generator=generator)
    block = torch.tensor([VISION_START] + [IMAGE_PAD] * n_image_tokens + [VISION_END]).expand(batch, -1)
    input_ids = torch.cat([text[:, :8], block, text[:, 8:]], dim=1)
    patch = v.in_channels * v.temporal_patch_size * v.patch_size**2
    pixels = torch.randn(batch * n_patches, patch, generator=generator)
    return {
        "input_ids": input_ids.to(device),
        "attention_mask": torch.ones_like(input_ids).to(device),
        "mm_token_type_ids": (input_ids == IMAGE_PAD).long().to(device),  # M-RoPE: 1 marks image tokens
        "pixel_values": pixels.to(device, dtype),
        "image_grid_thw": torch.tensor([[1, side, side]] * batch).to(device),
    }


def parameter_counts(model) -> dict[str, int]:
    """Parameters of the vision tower, the language model without its embedding table, the table."""
    inner = model.model
    embedding = inner.language_model.embed_tokens.weight.numel()
    text = sum(p.numel() for p in inner.language_model.parameters()) - embedding
    return {
        "vision": sum(p.numel() for p in inner.visual.parameters()),
        "text_without_embeddings": text,
        "embeddings": embedding,
    }


def prefill_flops(config, counts: dict[str, int], inputs: dict) -> float:
    """Multiply-add FLOPs of one prefill (logits for the last position only), from the shapes."""
    t, v = config.text_config, config.vision_config
    batch, seq = inputs["input_ids"].shape
    patches = inputs["pixel_values"].shape[0] // batch
    text = 2 * counts["text_without_embeddings"] * batch * seq
    text += 2 * t.num_hidden_layers * batch * seq * seq * t.hidden_size  # causal QK^T and AV
    head = 2 * counts["embeddings"] * batch  # lm_head (tied) at the last position
    vision = 2 * counts["vision"] * batch * patches
    vision += 4 * v.depth * batch * patches * patches * v.embed_dim  # full attention per image
    return float(text + head + vision)


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _best(fn, device: str, repeats: int) -> float:
    """Best wall time of ``fn()`` over ``repeats`` runs after one warm-up."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        _sync(device)
        began = time.perf_counter()
        fn()
        _sync(device)
        best = min(best, time.perf_counter() - began)
    return best


def hardware_floors(device: str, dtype, matmul: int, copy_mib: int) -> dict[str, float]:
    """Measured matrix-product FLOP/s (``matmul`` cube, ``dtype``) and copy bandwidth (read+written B/s)."""
    import torch

    a = torch.randn(matmul, matmul, device=device, dtype=dtype)
    b = torch.randn(matmul, matmul, device=device, dtype=dtype)
    seconds = _best(lambda: torch.mm(a, b), device, 5)
    source = torch.empty(copy_mib * 2**20, dtype=torch.uint8, device=device)
    target = torch.empty_like(source)
    copy_s = _best(lambda: target.copy_(source), device, 5)
    return {"matmul_flops_per_s": 2 * matmul**3 / seconds, "copy_bytes_per_s": 2 * source.numel() / copy_s}


@dataclass
class Machine:
    """Where a GPU benchmark runs: CUDA when there is one (bfloat16), else the CPU (float32), whether it
    runs small (``--smoke``, or on CPU), and the floors measured on it in this run."""

    device: str
    dtype: object
    smoke: bool
    name: str
    floors: dict[str, float]

    @classmethod
    def measure(cls, smoke: bool, matmul: int | None, shapes: tuple[str, str]) -> Machine:
        """The machine, printed with what runs on it (``shapes``: when small, when not) and its floors
        measured now: a ``matmul`` cube (default 8192, smoke 512) and a copy of 1 GiB (smoke 64 MiB)."""
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
        smoke = smoke or device == "cpu"
        dtype = torch.bfloat16 if device == "cuda" else torch.float32
        name = (
            torch.cuda.get_device_name(0)
            if device == "cuda"
            else (platform.processor() or platform.machine())
        )
        print(f"device: {device} ({name}), {dtype}, {shapes[0] if smoke else shapes[1]}")
        matmul = matmul or (512 if smoke else 8192)
        floors = hardware_floors(device, dtype, matmul, 64 if smoke else 1024)
        print(
            f"floors: matmul {floors['matmul_flops_per_s'] / 1e12:.2f} TFLOP/s ({matmul}^3), "
            f"copy {floors['copy_bytes_per_s'] / 1e9:.1f} GB/s"
        )
        return cls(device, dtype, smoke, name, floors)

    def result(self, **fields: object) -> dict:
        """A results file's fields: the machine's, then ``fields``."""
        import torch

        return {
            "device": self.device,
            "gpu": self.name if self.device == "cuda" else None,
            "smoke": self.smoke,
            "dtype": str(self.dtype),
            "torch": torch.__version__,
            "floors": self.floors,
            **fields,
        }


def run_batches(batches: list[int], run: Callable[[int], dict], label: str = "") -> list[dict]:
    """``run(batch)`` for each batch size; one that runs out of GPU memory is reported and skipped."""
    import torch

    rows = []
    for batch in batches:
        try:
            rows.append(run(batch))
        except torch.OutOfMemoryError as exc:
            print(f"{label}batch {batch}: out of memory ({str(exc).splitlines()[0]})")
            torch.cuda.empty_cache()
    return rows


def run_case(model, config, counts, floors, batch: int, variant: str, args, device: str, dtype) -> dict:
    import torch

    inputs = make_inputs(config, batch, args.prompt_tokens, args.image, device, dtype)
    seq = inputs["input_ids"].shape[1]
    with torch.inference_mode():
        prefill_s = _best(lambda: model(**inputs, use_cache=False, logits_to_keep=1), device, args.repeats)
        options = {"do_sample": False, "max_new_tokens": args.new_tokens, "min_new_tokens": args.new_tokens}
        if variant == "static":
            options["cache_implementation"] = "static"
        generate_s = _best(lambda: model.generate(**inputs, **options), device, args.repeats)
        # one generated token is the prefill plus one step on the same code path: the difference to the
        # whole generate is the decode steps alone (a separate forward pass would differ in its overheads)
        first = {**options, "max_new_tokens": 1, "min_new_tokens": 1}
        first_s = _best(lambda: model.generate(**inputs, **first), device, args.repeats)
    flops = prefill_flops(config, counts, inputs)
    steps = max(args.new_tokens - 1, 1)
    step_s = (generate_s - first_s) / steps if generate_s > first_s else None  # None: lost in timing noise
    weight_bytes = (counts["text_without_embeddings"] + counts["embeddings"]) * model.dtype.itemsize
    kv_bytes = (
        2 * config.text_config.num_hidden_layers * batch * (seq + args.new_tokens // 2)
        * config.text_config.num_key_value_heads * (config.text_config.hidden_size
        // config.text_config.num_attention_heads) * model.dtype.itemsize
    )  # fmt: skip
    floor_step_s = weight_bytes / floors["copy_bytes_per_s"]
    return {
        "batch": batch,
        "variant": variant,
        "prompt_tokens": seq,
        "new_tokens": args.new_tokens,
        "prefill_s": prefill_s,
        "prefill_tokens_per_s": batch * seq / prefill_s,
        "prefill_flops_per_s": flops / prefill_s,
        "prefill_share_of_matmul": flops / prefill_s / floors["matmul_flops_per_s"],
        "decode_ms_per_step": None if step_s is None else 1000 * step_s,
        "decode_tokens_per_s": None if step_s is None else batch / step_s,
        "decode_floor_ms_per_step": 1000 * floor_step_s,
        "decode_share_of_floor": None if step_s is None else floor_step_s / step_s,
        "kv_cache_mb_read_per_step": kv_bytes / 1e6,
        "generate_s": generate_s,
        "samples_per_s": batch / generate_s,
    }


def main(argv: list[str] | None = None) -> None:
    parser = arguments(__doc__.splitlines()[0] + " (--smoke: a tiny model, small inputs: the default on CPU)")
    parser.add_argument("--batches", default=None, help="batch sizes (default 1,2,4,8,16,32,64; smoke 1,2,4)")
    parser.add_argument("--variants", default="dynamic,static", help="dynamic and/or static (compiled)")
    parser.add_argument("--prompt-tokens", type=int, default=None, help="text tokens (default 400; smoke 32)")
    parser.add_argument("--image", type=int, default=None, help="image side, px (default 448; smoke 56)")
    parser.add_argument("--new-tokens", type=int, default=None, help="new tokens (default 128; smoke 8)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--matmul", type=int, default=None, help="matmul side (default 8192; smoke 512)")
    args = parser.parse_args(argv or [])
    if args.smoke:  # asked for (not the CPU default): one batch size, one timed run
        args.batches, args.repeats = args.batches or "1", 1
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    before = load()
    machine = Machine.measure(args.smoke, args.matmul, ("smoke (tiny model)", "Qwen2-VL-2B shape"))
    device, dtype, smoke = machine.device, machine.dtype, machine.smoke
    args.prompt_tokens = args.prompt_tokens or (32 if smoke else 400)
    args.image = args.image or (56 if smoke else 448)
    args.new_tokens = args.new_tokens or (8 if smoke else 128)
    batches = [int(x) for x in (args.batches or ("1,2,4" if smoke else "1,2,4,8,16,32,64")).split(",")]
    variants = [x.strip() for x in args.variants.split(",") if x.strip()]
    config = qwen2_vl_config(smoke)
    model = build_model(config, device, dtype)
    counts = parameter_counts(model)
    weights_gb = (counts["text_without_embeddings"] + counts["embeddings"]) * model.dtype.itemsize / 1e9
    print(f"parameters: {counts}; language-model weights read per decode step {weights_gb:.2f} GB")
    rows = []
    for variant in variants:

        def case(batch: int, variant: str = variant) -> dict:
            return run_case(model, config, counts, machine.floors, batch, variant, args, device, dtype)

        for row in run_batches(batches, case, f"{variant} "):
            rows.append(row)
            decode = (
                "decode lost in timing noise"
                if row["decode_ms_per_step"] is None
                else f"decode {row['decode_ms_per_step']:7.2f} ms/step, "
                f"{row['decode_tokens_per_s']:8.0f} tok/s = {100 * row['decode_share_of_floor']:5.1f}% "
                f"of floor ({row['decode_floor_ms_per_step']:.2f} ms)"
            )
            print(
                f"{variant:7s} batch {row['batch']:3d}: {row['samples_per_s']:8.2f} samples/s | prefill "
                f"{row['prefill_tokens_per_s']:10.0f} tok/s = {100 * row['prefill_share_of_matmul']:5.1f}% "
                f"of matmul | {decode}"
            )
    result = machine.result(
        parameters=counts, options=vars(args), rows=rows, load_before=before, load_after=load()
    )
    timed = [r for r in rows if r["decode_ms_per_step"] is not None]
    if timed:
        top = max(timed, key=lambda r: r["batch"])
        goal(
            f"{top['variant']} batch {top['batch']}: prefill {100 * top['prefill_share_of_matmul']:.1f}% "
            f"of the matmul rate, decode {100 * top['decode_share_of_floor']:.1f}% of the weight-read "
            "floor, both measured in this run"
            + (" (smoke: a tiny model, says nothing of the real one)" if smoke else ""),
            before,
        )
    else:
        goal("no decode step could be timed", before)
    # an explicit --smoke writes nothing; the CPU default (a smoke-sized run) keeps its own file
    save(RESULTS / f"local_vlm-{device}{'-smoke' if smoke else ''}.json", result, args.smoke)


if __name__ == "__main__":
    main(sys.argv[1:])
