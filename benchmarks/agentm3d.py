"""AgentM3D's Best-of-N stage on a GPU: samples/s of the backbone at N candidates plus the reward model.

    python -m benchmarks.agentm3d [--batches 1,4,16,32] [--n 5]
    python -m benchmarks.agentm3d --smoke          # tiny models on CPU, seconds

One detection agent's Best-of-N stage as the ``agentm3d`` detector runs it with ``backend=local`` and a
``reward_model`` folder: for a batch of B samples, one ``generate`` of N sampled candidates per prompt
(``num_return_sequences=N``; B x N sequences), then one forward pass of the reward model over the B x N
candidates (prompt and answer). Both models are randomly initialised in the papers' shapes (configs written
here, nothing downloaded; their answers are noise, their speed is the real models'):

- the backbone: Qwen3-VL-4B-Instruct's architecture (``Qwen3VLForConditionalGeneration``, the paper's
  smaller backbone), ``--prompt-tokens`` text tokens and one ``--image`` x ``--image`` picture per sample;
- the reward model: a 2B Gemma2 sequence classifier (GRM-Gemma2-2B-rewardmodel-ft's shape).

Prefill and decode are reported as shares of the floors ``benchmarks.local_vlm`` measures (its helpers,
the same run): prefill FLOP/s against the bf16 matrix-product rate, a decode step against reading the
language model's weights once at the copy bandwidth. ``transformers`` expands the prompts N times before the
prefill (no prefix sharing), so the prefill does N times the work of one prompt; the share counts the work
done. The stage's samples/s is B over generate + reward time; a sample runs one to three such stages (the
cascade) plus the planner's and critiques' short calls. On CPU the default is the smoke run. Writes
``benchmarks/results/agentm3d-<device>.json``.
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

from benchmarks import RESULTS, arguments, goal, load, save
from benchmarks.local_vlm import (
    Machine,
    _best,
    build,
    make_inputs,
    parameter_counts,
    prefill_flops,
    run_batches,
)


def qwen3_vl_config(smoke: bool):
    """Qwen3-VL-4B-Instruct's architecture (its config.json), or a tiny one for ``--smoke``."""
    from transformers import Qwen3VLConfig

    if smoke:
        text = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4}
        text |= {"num_key_value_heads": 2, "head_dim": 16}
        vision = {"depth": 2, "hidden_size": 64, "intermediate_size": 128, "num_heads": 4}
        vision |= {"deepstack_visual_indexes": [0], "out_hidden_size": 64}
        mrope = [2, 3, 3]
    else:
        text = {"hidden_size": 2560, "intermediate_size": 9728, "num_hidden_layers": 36}
        text |= {"num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128}
        vision = {"depth": 24, "hidden_size": 1024, "intermediate_size": 4096, "num_heads": 16}
        vision |= {"deepstack_visual_indexes": [5, 11, 17], "out_hidden_size": 2560}
        mrope = [24, 20, 20]
    text |= {
        "vocab_size": 151936,
        "max_position_embeddings": 262144,
        "rms_norm_eps": 1e-6,
        "rope_parameters": {"rope_type": "default", "rope_theta": 5e6, "mrope_section": mrope},
        "tie_word_embeddings": True,
    }
    vision |= {"patch_size": 16, "spatial_merge_size": 2, "temporal_patch_size": 2, "in_channels": 3}
    vision |= {"num_position_embeddings": 2304, "hidden_act": "gelu_pytorch_tanh"}
    return Qwen3VLConfig(
        text_config=text,
        vision_config=vision,
        image_token_id=151655,
        video_token_id=151656,
        vision_start_token_id=151652,
        vision_end_token_id=151653,
        tie_word_embeddings=True,
    )


def gemma2_reward_config(smoke: bool):
    """A 2B Gemma2 sequence classifier (Gemma-2-2B's shape, one reward logit), or a tiny one."""
    from transformers import Gemma2Config

    if smoke:
        shape = {"vocab_size": 1024, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2}
        shape |= {"num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16}
    else:
        shape = {
            "vocab_size": 256000,
            "hidden_size": 2304,
            "intermediate_size": 9216,
            "num_hidden_layers": 26,
        }
        shape |= {"num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256}
    return Gemma2Config(**shape, num_labels=1, pad_token_id=0, max_position_embeddings=8192)


def flop_view(config) -> SimpleNamespace:
    """Qwen3-VL's config under the names ``local_vlm.prefill_flops`` reads (the vision width is
    ``hidden_size`` there, ``embed_dim`` in Qwen2-VL)."""
    v = config.vision_config
    return SimpleNamespace(
        text_config=config.text_config, vision_config=SimpleNamespace(depth=v.depth, embed_dim=v.hidden_size)
    )


def run_case(
    backbone, reward, config, counts, reward_params, floors, batch: int, args, device, dtype
) -> dict:
    import torch

    inputs = make_inputs(config, batch, args.prompt_tokens, args.image, device, dtype)
    seq = inputs["input_ids"].shape[1]
    n = args.n
    options = {
        "do_sample": True,
        "temperature": 0.7,
        "num_return_sequences": n,
        "max_new_tokens": args.new_tokens,
        "min_new_tokens": args.new_tokens,
        "pad_token_id": 151643,
    }
    first = {**options, "max_new_tokens": 1, "min_new_tokens": 1}
    # the reward model reads each candidate: the prompt's text and the answer (B x N sequences)
    reward_len = args.prompt_tokens + args.new_tokens
    generator = torch.Generator().manual_seed(batch)
    reward_ids = torch.randint(3, reward.config.vocab_size, (batch * n, reward_len), generator=generator)
    reward_inputs = {
        "input_ids": reward_ids.to(device),
        "attention_mask": torch.ones_like(reward_ids).to(device),
    }
    with torch.inference_mode():
        expanded = {
            k: v.repeat_interleave(n, 0) if k != "pixel_values" else v.repeat(n, 1) for k, v in inputs.items()
        }
        prefill_s = _best(
            lambda: backbone(**expanded, use_cache=False, logits_to_keep=1), device, args.repeats
        )
        generate_s = _best(lambda: backbone.generate(**inputs, **options), device, args.repeats)
        first_s = _best(lambda: backbone.generate(**inputs, **first), device, args.repeats)
        reward_s = _best(lambda: reward(**reward_inputs), device, args.repeats)
    flops = prefill_flops(flop_view(config), counts, expanded)
    steps = max(args.new_tokens - 1, 1)
    step_s = (generate_s - first_s) / steps if generate_s > first_s else None
    weight_bytes = (counts["text_without_embeddings"] + counts["embeddings"]) * backbone.dtype.itemsize
    floor_step_s = weight_bytes / floors["copy_bytes_per_s"]
    rc = reward.config
    reward_flops = 2 * reward_params * batch * n * reward_len
    reward_flops += (
        2 * rc.num_hidden_layers * batch * n * reward_len**2 * rc.num_attention_heads * rc.head_dim
    )
    stage_s = generate_s + reward_s
    return {
        "batch": batch,
        "n": n,
        "sequences": batch * n,
        "prompt_tokens": seq,
        "new_tokens": args.new_tokens,
        "prefill_s": prefill_s,
        "prefill_share_of_matmul": flops / prefill_s / floors["matmul_flops_per_s"],
        "decode_ms_per_step": None if step_s is None else 1000 * step_s,
        "decode_tokens_per_s": None if step_s is None else batch * n / step_s,
        "decode_floor_ms_per_step": 1000 * floor_step_s,
        "decode_share_of_floor": None if step_s is None else floor_step_s / step_s,
        "generate_s": generate_s,
        "reward_s": reward_s,
        "reward_share_of_matmul": reward_flops / reward_s / floors["matmul_flops_per_s"],
        "reward_share_of_stage": reward_s / stage_s,
        "stage_s": stage_s,
        "samples_per_s": batch / stage_s,
    }


def main(argv: list[str] | None = None) -> None:
    parser = arguments(__doc__.splitlines()[0] + " (--smoke: tiny models, small inputs: the default on CPU)")
    parser.add_argument("--batches", default=None, help="samples per batch (default 1,4,16,32; smoke 1,2)")
    parser.add_argument("--n", type=int, default=5, help="candidates per sample (paper: 5)")
    parser.add_argument("--prompt-tokens", type=int, default=None, help="text tokens (default 400; smoke 32)")
    parser.add_argument("--image", type=int, default=None, help="image side, px (default 448; smoke 64)")
    parser.add_argument("--new-tokens", type=int, default=None, help="answer tokens (default 160; smoke 8)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--matmul", type=int, default=None, help="matmul side (default 8192; smoke 512)")
    args = parser.parse_args(argv or [])
    if args.smoke:
        args.batches, args.repeats = args.batches or "1,2", 1
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import Gemma2ForSequenceClassification, Qwen3VLForConditionalGeneration

    before = load()
    shapes = ("smoke (tiny models)", "Qwen3-VL-4B + Gemma2-2B reward shapes")
    machine = Machine.measure(args.smoke, args.matmul, tuple(f"{shape}, N={args.n}" for shape in shapes))
    device, dtype, smoke = machine.device, machine.dtype, machine.smoke
    args.prompt_tokens = args.prompt_tokens or (32 if smoke else 400)
    args.image = args.image or (64 if smoke else 448)
    args.new_tokens = args.new_tokens or (8 if smoke else 160)
    batches = [int(x) for x in (args.batches or ("1,2" if smoke else "1,4,16,32")).split(",")]
    config = qwen3_vl_config(smoke)
    backbone = build(Qwen3VLForConditionalGeneration, config, device, dtype)
    reward = build(Gemma2ForSequenceClassification, gemma2_reward_config(smoke), device, dtype)
    counts = parameter_counts(backbone)
    reward_params = sum(p.numel() for p in reward.parameters()) - reward.model.embed_tokens.weight.numel()
    print(f"backbone parameters: {counts}; reward model without embeddings: {reward_params}")

    def case(batch: int) -> dict:
        return run_case(
            backbone, reward, config, counts, reward_params, machine.floors, batch, args, device, dtype
        )

    rows = run_batches(batches, case)
    for row in rows:
        decode = (
            "decode lost in timing noise"
            if row["decode_ms_per_step"] is None
            else f"decode {row['decode_ms_per_step']:6.2f} ms/step = "
            f"{100 * row['decode_share_of_floor']:5.1f}% of floor ({row['decode_floor_ms_per_step']:.2f} ms)"
        )
        print(
            f"batch {row['batch']:3d} x N={args.n}: {row['samples_per_s']:7.2f} samples/s per stage | "
            "prefill "
            f"{100 * row['prefill_share_of_matmul']:5.1f}% of matmul | {decode} | reward "
            f"{row['reward_s']:.3f} s ({100 * row['reward_share_of_stage']:.1f}% of the stage, "
            f"{100 * row['reward_share_of_matmul']:.1f}% of matmul)"
        )
    result = machine.result(
        backbone="Qwen3VLForConditionalGeneration, Qwen3-VL-4B-Instruct shape" if not smoke else "tiny",
        reward_model="Gemma2ForSequenceClassification, Gemma-2-2B shape" if not smoke else "tiny",
        parameters=counts,
        reward_parameters_without_embeddings=reward_params,
        options=vars(args),
        rows=rows,
        load_before=before,
        load_after=load(),
    )
    timed = [r for r in rows if r["decode_ms_per_step"] is not None]
    if timed:
        top = max(timed, key=lambda r: r["batch"])
        goal(
            f"batch {top['batch']} x N={top['n']}: {top['samples_per_s']:.2f} samples/s per Best-of-N stage; "
            f"prefill {100 * top['prefill_share_of_matmul']:.1f}% of the matmul rate, decode "
            f"{100 * top['decode_share_of_floor']:.1f}% of the weight-read floor, both measured in this run"
            + (" (smoke: tiny models, says nothing of the real ones)" if smoke else ""),
            before,
        )
    else:
        goal("no decode step could be timed", before)
    save(RESULTS / f"agentm3d-{device}{'-smoke' if smoke else ''}.json", result, args.smoke)


if __name__ == "__main__":
    main(sys.argv[1:])
