"""Instructions hidden in untrusted text, for every suite: the attack library, where and how an attack is
planted, which case gets which attack, the defences to compare, the offline checks that an attack worked, the
metric names the cross-suite report reads, and the driver that runs, checks and counts a suite's injected runs
(:mod:`.driver`). See docs/injection.md."""

from knowgap.injection.attacks import ATTACKS_FILE, CHECKS, FAMILIES, FAMILY_TEXT, Attack, for_suite, read_attacks
from knowgap.injection.defences import DEFENCES, guard_system, mark_untrusted, sandwich_reminder
from knowgap.injection.driver import InjectedTrial, InjectionDriver, Planted, Reply, RunRate
from knowgap.injection.metrics import ATTACK_SUCCESS, CLEAN_TASK_SCORE, INJECTION_METRICS, NOISE_FLOOR
from knowgap.injection.options import InjectionOptions, chosen_defences, plan_for, suite_attacks
from knowgap.injection.placement import DISGUISES, POSITIONS, disguise, inject, list_index
from knowgap.injection.plan import Injection, make_injection, plan_injections
from knowgap.injection.success import attack_worked, explained_check, marker_seen, system_echo

__all__ = ["ATTACKS_FILE", "ATTACK_SUCCESS", "CHECKS", "CLEAN_TASK_SCORE", "DEFENCES", "DISGUISES", "FAMILIES",
           "FAMILY_TEXT", "INJECTION_METRICS", "NOISE_FLOOR", "POSITIONS", "Attack", "InjectedTrial", "Injection",
           "InjectionDriver", "InjectionOptions", "Planted", "Reply", "RunRate", "attack_worked", "chosen_defences",
           "disguise", "explained_check", "for_suite", "guard_system", "inject", "make_injection",
           "mark_untrusted", "list_index", "marker_seen", "plan_for", "plan_injections", "read_attacks",
           "sandwich_reminder", "suite_attacks", "system_echo"]
