"""`models`: the model registry with availability on this machine."""

from __future__ import annotations

import argparse

from fairness_core.cli import print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("models", help="list model presets and whether they can run here")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--task", choices=("causal-lm", "seq2seq-lm", "encoder", "classifier"))
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from fairness_core.device import describe_device
    from fairness_core.models import PRESETS, availability, list_adapters

    entries = []
    for preset in PRESETS:
        if args.task and preset.task != args.task:
            continue
        available = availability(preset)
        entries.append({
            "key": preset.key,
            "label": preset.label,
            "task": preset.task,
            "purpose": preset.purpose,
            "params": preset.params,
            "licence": preset.licence,
            "hub_id": preset.hub_id,
            "offline": preset.offline,
            "status": available.status,
            "available": available.status == "available",
            "reason": available.reason,
        })
    # Debiasing adapters trained or imported here (`mitigate train` / `mitigate import`), by id
    adapters = [info.describe() for info in list_adapters()]
    if args.json:
        print_json({"device": describe_device(), "models": entries, "adapters": adapters})
        return 0
    device = describe_device()
    print(f"device: {device['summary']}")
    width = max(len(e["key"]) for e in entries)
    for entry in entries:
        print(f"{entry['key']:<{width}}  {entry['task']:<10}  {entry['status']:<12}  {entry['reason']}")
    for adapter in adapters:
        print(f"adapter {adapter['id']}: {adapter['trained_for'] and adapter['trained_for'].get('name')} on "
              f"{adapter['backbone'].get('label')}, {adapter['attribute']}, {adapter['steps']} steps")
    return 0
