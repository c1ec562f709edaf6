"""``knowgap partial view``: print exactly the view an agent gets; ``knowgap generate partial``: rewrite the
shipped dataset from its generator."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from knowgap.command_groups import CommandGroups


def view_text(scenario_file: Path, policy_file: Path | None, role: str | None, *, task: str | None = None,
              budget: bool = False, budget_tokens: int = 5, protocol: str = "json", prompt: str = "strict") -> str:
    """The evidence text (or, with ``task``, the whole prompt under the system prompt ``prompt``) the role's agent
    gets; in budget mode with the native protocol, also the tool definition the request carries."""
    import json

    from knowgap.errors import KnowgapError
    from knowgap.suites.partial.dataset import load_policies, load_scenario
    from knowgap.suites.partial.prompts import (
        SYSTEM_PROMPTS,
        Protocol,
        budget_prompt,
        example_path,
        request_evidence_tool,
        system_prompt,
        task_prompt,
    )
    from knowgap.suites.partial.view import build_view, render_view

    scenario = load_scenario(scenario_file)
    policies = load_policies(policy_file) if policy_file else scenario.policies
    if not policies:
        raise KnowgapError(f"{scenario_file}: the scenario holds no policies; pass --policy POLICY.json")
    if role is None:
        if len(policies) > 1:
            raise KnowgapError(f"several roles ({', '.join(p.role for p in policies)}): pick one with --role")
        policy = policies[0]
    else:
        matching = [p for p in policies if p.role == role]
        if not matching:
            raise KnowgapError(f"no policy for role '{role}' (roles: {', '.join(p.role for p in policies)})")
        policy = matching[0]
    built = build_view(scenario, policy, budget_mode=budget)
    lang = scenario.effective_lang()
    evidence = render_view(built.view, lang)
    if protocol not in ("json", "native"):
        raise KnowgapError(f"--tool-protocol must be json or native, not {protocol!r}")
    if prompt not in SYSTEM_PROMPTS:
        raise KnowgapError(f"--prompt must be one of {', '.join(SYSTEM_PROMPTS)}, not {prompt!r}")
    if task is None:
        return evidence
    found = [t for t in scenario.tasks if t.id == task]
    if not found:
        raise KnowgapError(f"{scenario_file}: no task '{task}' (tasks: {', '.join(t.id for t in scenario.tasks)})")
    system = system_prompt(scenario, policy.role, policy.description, prompt)
    example = example_path(scenario, built.view.requestable)
    if not budget:
        return f"[system]\n{system}\n\n[user]\n{task_prompt(scenario, found[0], evidence)}"
    mode: Protocol = "native" if protocol == "native" else "json"
    text = (f"[system]\n{system}\n{budget_prompt(scenario, budget_tokens, example, mode)}\n\n[user]\n"
            f"{task_prompt(scenario, found[0], evidence, budget_tokens, example, mode)}")
    if mode == "native":
        tool = request_evidence_tool(lang).model_dump()
        text += f"\n\n[tools]\n{json.dumps([tool], ensure_ascii=False, indent=2)}"
    return text


def register(app: typer.Typer, groups: CommandGroups) -> None:
    partial_app = typer.Typer(no_args_is_help=True, help="Partial Evidence Bench tools: knowgap partial view ...")
    app.add_typer(partial_app, name="partial")

    @partial_app.command("view")
    def view(scenario: Annotated[Path, typer.Argument(help="Scenario JSON (the seed's format works as written).")],
             policy: Annotated[Path | None, typer.Option(help="Policy JSON (one policy or a list); default: the "
                                                              "scenario's own policies.")] = None,
             role: Annotated[str | None, typer.Option(help="The role, when there are several.")] = None,
             task: Annotated[str | None, typer.Option(help="Print the whole prompt for this task id.")] = None,
             budget: Annotated[int | None, typer.Option("--budget", help="Budget mode with N query tokens: hold "
                                                        "back non-preloaded sources.")] = None,
             tool_protocol: Annotated[str, typer.Option(help="With --budget and --task: the prompt for the json "
                                                             "protocol or for native tool calling (adds the "
                                                             "tool definition).")] = "json",
             prompt: Annotated[str, typer.Option(help="With --task: the system prompt (strict, plain, stepwise; "
                                                      "see run partial --prompts).")] = "strict") -> None:
        """Print exactly the evidence an agent with ROLE gets from SCENARIO under POLICY.

        Example: knowgap partial view examples/partial/scenario_001_customer_complaint.json
        --policy examples/partial/policy_agent_tier1.json
        """
        typer.echo(view_text(scenario, policy, role, task=task, budget=budget is not None,
                             budget_tokens=budget or 0, protocol=tool_protocol, prompt=prompt))

    @groups.generate.command("partial")
    def generate_partial(out: Annotated[Path | None, typer.Option(help="Where to write (default: the shipped "
                                                                      "data file).")] = None) -> None:
        """Rewrite the partial suite's scenarios from its generator (facts -> data, texts, oracles).

        Example: knowgap generate partial --out /tmp/scenarios.jsonl
        """
        from knowgap.suites.partial.dataset import DATA
        from knowgap.suites.partial.generate import write_dataset

        target = out or DATA
        typer.echo(f"wrote {write_dataset(target)} scenarios to {target}")
