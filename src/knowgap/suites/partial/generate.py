"""The shipped dataset, generated systematically: 4 families x 6 scenarios (3 zh, 3 en), 2 roles each.

Every scenario is built from a few hidden *facts* (is the customer a VIP, is there a known defect...). The
ground truth, the policies and the texts are written from the facts; each task's answer is a documented
rule over the facts. The oracles follow from the rule and what each role can see of each fact:

- ``visible``: the role's view shows the fact (possibly masked, bucketed or summarised in a way that keeps it);
- ``stale``: the role only sees a stale cached copy, which disagrees with the source of truth;
- ``hidden``: the role cannot see it (field, row or record type denied).

The answer on a role's view is the rule applied to what the view shows (a hidden fact takes its neutral
default, a stale one its stale value). The view is *sufficient* when the rule gives the full-data answer
for every possible value of the facts the role cannot see for sure; the *hidden relevant* evidence is the
paths of those facts that can change the answer. ``knowgap generate partial`` rewrites the data file; a test
checks the committed file equals this generator's output.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowgap.suites.partial.dataset import DIMENSIONS

Facts = dict[str, bool]
Rule = Callable[[Facts], str]


@dataclass(frozen=True)
class FactSpec:
    name: str
    path: str
    default: bool = False


def oracle(rule: Rule, specs: list[FactSpec], truth: Facts, vis: dict[str, str]) -> dict[str, Any]:
    """(answer on the view, sufficient, hidden relevant paths) for one role."""
    known = {s.name: truth[s.name] if vis[s.name] == "visible" else
             (not truth[s.name]) if vis[s.name] == "stale" else s.default for s in specs}
    unsure = [s for s in specs if vis[s.name] != "visible"]
    full = rule(truth)
    completions = [dict(known, **dict(zip([s.name for s in unsure], values, strict=True)))
                   for values in itertools.product([False, True], repeat=len(unsure))]
    sufficient = all(rule(c) == full for c in completions)
    relevant = [s.path for s in unsure if any(rule(c) != rule(dict(c, **{s.name: not c[s.name]}))
                                              for c in completions)]
    return {"answer": rule(known), "sufficient": sufficient, "hidden_relevant": relevant}


def _level(score: int, labels: list[str], high: int = 3, mid: int = 2) -> str:
    return labels[0] if score >= high else labels[1] if score >= mid else labels[2]


def _task(tid: str, ttype: str, question: str, labels: list[str], rule: Rule, specs: list[FactSpec], truth: Facts,
          vis: dict[str, dict[str, str]], dims: list[str], confidence: bool = True) -> dict[str, Any]:
    per_role = {role: oracle(rule, specs, truth, v) for role, v in vis.items()}
    decision = ttype in ("classification", "root_cause", "next_action")
    if not decision:
        for o in per_role.values():
            o["answer"] = None
    ranked = [s.path for s in specs]
    return {"id": tid, "type": ttype, "question": question, "labels": labels if decision else [],
            "asks_confidence": confidence and decision, "oracle_full": rule(truth) if decision else None,
            "oracle": per_role, "dimensions": dims, "relevant": ranked}


def _plan_task(lang: str, labels: list[str], rule: Rule, specs: list[FactSpec], truth: Facts,
               vis: dict[str, dict[str, str]], dims: list[str]) -> dict[str, Any]:
    """The query-planning task every family ends with: its oracle gaps follow the family's main decision."""
    return _task("plan", "query_planning", T(lang, "如果可以申请更多证据，请按优先级列出你要申请的证据。",
                                             "If you could request more evidence, list what you would request, "
                                             "most important first."),
                 labels, rule, specs, truth, vis, sorted(set(dims) | {"cost"}, key=DIMENSIONS.index))


def _dims(base: list[str], conflict: bool, requestable: bool) -> list[str]:
    return base + (["timeliness"] if conflict else []) + (["cost"] if requestable else [])


Z = {"zh": 0, "en": 1}


def T(lang: str, zh: str, en: str) -> str:
    return zh if lang == "zh" else en


# ------------------------------------------------------------------------------------- customer support
CS_VARIANTS = [
    ("zh", dict(severe=True, vip=True, defect=True, big=True), False, True),
    ("zh", dict(severe=True, vip=False, defect=False, big=False), True, False),
    ("zh", dict(severe=False, vip=True, defect=False, big=True), False, True),
    ("en", dict(severe=True, vip=True, defect=False, big=False), False, False),
    ("en", dict(severe=False, vip=False, defect=True, big=True), True, True),
    ("en", dict(severe=True, vip=False, defect=True, big=True), False, False),
]
CS_NAMES = {"zh": ["张三", "李小龙", "王丽"], "en": ["Mary Hughes", "Tom Baker", "Ana Silva"]}


def customer_support(i: int, lang: str, f: Facts, conflict: bool, requestable: bool) -> dict[str, Any]:
    k = i % 3
    name = CS_NAMES[lang][k]
    phone = ["13800138000", "13912345678", "18622223333"][k] if lang == "zh" else ["4155550142", "2025550188",
                                                                                   "3125550176"][k]
    amount = [1500.0, 2399.0, 1288.0][k] if f["big"] else [299.0, 459.0, 389.0][k]
    product = T(lang, ["蓝牙耳机Y2", "扫地机器人R5", "电热水壶K3"][k],
                ["Earbuds Y2", "Robot vacuum R5", "Kettle K3"][k])
    batch = ["B202310", "R5-2311", "K3-0917"][k]
    complaint = (T(lang, f"我刚买的{product}完全无法使用，已经影响到日常生活！你们的品控太差了，必须马上处理！",
                   f"The {product} I just bought does not work at all and it is ruining my week. Fix this now!")
                 if f["severe"] else
                 T(lang, f"{product}用起来还行，就是说明书有点看不懂，想问下设置方法。",
                   f"The {product} works, but the manual is confusing. How do I set it up?"))
    notes = (T(lang, f"批次#{batch}可能存在质量问题，生产部门正在调查，同批次已有多起投诉。",
               f"Batch #{batch} may have a quality defect; production is investigating; several complaints already.")
             if f["defect"] else
             T(lang, f"批次#{batch}未发现质量问题，近三个月无同类投诉。",
               f"Batch #{batch} has no known quality issue; no similar complaints in three months."))
    vip = "gold" if f["vip"] else "none"
    gt: dict[str, Any] = {
        "customer": {"id": f"cust_{120 + i}", "name": name, "phone": phone, "vip_level": vip,
                     "credit_score": [780, 655, 702][k]},
        "orders": [
            {"id": f"order_{450 + i}", "date": "2023-10-01", "amount": [199.0, 89.0, 129.0][k], "status": "delivered",
             "product": T(lang, "充电线C1", "Charging cable C1"), "payment_card": "6222020200112233"[:-1] + str(k)},
            {"id": f"order_{780 + i}", "date": "2023-10-20", "amount": amount, "status": "delivered",
             "product": product, "payment_card": ["6217000010023456789", "6228480402564890018",
                                                  "4111111111111111"][k]},
        ],
        "complaint": {"text": complaint, "channel": T(lang, "在线客服", "web chat"),
                      "timestamp": "2023-10-25 14:30:00"},
        "internal_notes": notes,
    }
    sources: dict[str, Any] = {
        "customer": {"endpoint": "GET /api/customers/{id}", "as_of": "2023-10-25 14:00"},
        "orders": {"endpoint": "GET /api/orders?customer={id}", "as_of": "2023-10-25 14:00"},
        "complaint": {"endpoint": "GET /api/tickets/{id}", "as_of": "2023-10-25 14:30"},
        "internal_notes": {"endpoint": "GET /internal/notes/{customer}", "as_of": "2023-10-24 18:00",
                           "preloaded": not requestable, "cost": 2},
    }
    if conflict:
        gt["crm_cache"] = {"customer_id": f"cust_{120 + i}", "vip_level": "none" if f["vip"] else "gold",
                           "synced_at": "2023-06-30 02:00"}
        sources["crm_cache"] = {"endpoint": "crm-cache (read replica)", "as_of": "2023-06-30 02:00", "stale": True,
                                "note": "the cache has not synced since June; the customer record is current"}
    summaries = {"complaint.text": T(lang, "客户反映产品完全无法使用，情绪激动，要求立即处理。" if f["severe"] else
                                     "客户询问产品设置方法，语气平和。",
                                     "Customer says the product is unusable, is upset and wants it fixed now."
                                     if f["severe"] else "Customer asks how to set the product up; calm tone."),
                 "internal_notes": T(lang, "该批次有质量问题正在调查。" if f["defect"] else "该批次无已知质量问题。",
                                     "This batch has a quality issue under investigation." if f["defect"] else
                                     "No known quality issue for this batch.")}
    tier1 = {"role": "tier1_support_agent",
             "description": T(lang, "一线客服助手", "first-line support assistant"),
             "allowed_evidence": {"customer": ["id", "name", "phone"], "orders": ["id", "date", "status", "amount"],
                                  "complaint": "*", **({"crm_cache": "*"} if conflict else {})},
             "masking_rules": {"customer.name": "mask_middle", "customer.phone": "keep_last:4",
                               "orders.amount": f"bucket:1000:{T(lang, '元', ' CNY')}"}}
    lead_customer = ["id", "name"] + ([] if conflict else ["vip_level"])
    lead = {"role": "support_lead", "description": T(lang, "客服主管", "support team lead"),
            "allowed_evidence": {"customer": lead_customer, "orders": "*", "complaint": ["text", "timestamp"],
                                 "internal_notes": True, **({"crm_cache": "*"} if conflict else {})},
            "masking_rules": {"customer.name": "mask_middle", "orders.payment_card": "keep_last:4",
                              "complaint.text": "summarise", "internal_notes": "summarise"}}
    vip_vis = "stale" if conflict else "hidden"
    vis = {"tier1_support_agent": {"severe": "visible", "vip": vip_vis, "defect": "hidden", "big": "visible"},
           "support_lead": {"severe": "visible", "vip": "stale" if conflict else "visible", "defect": "visible",
                            "big": "visible"}}
    specs = [FactSpec("defect", "internal_notes"), FactSpec("vip", "customer.vip_level"),
             FactSpec("severe", "complaint.text"), FactSpec("big", "orders.amount")]
    urgency = [T(lang, "高", "high"), T(lang, "中", "medium"), T(lang, "低", "low")]

    def urgency_rule(x: Facts) -> str:
        return _level(sum(map(int, (x["severe"], x["vip"], x["defect"], x["big"]))), urgency)

    actions = ["escalate_to_quality_team", "offer_refund_or_replacement", "standard_troubleshooting"]

    def action_rule(x: Facts) -> str:
        if x["defect"]:
            return actions[0]
        return actions[1] if x["severe"] and (x["vip"] or x["big"]) else actions[2]

    dims = _dims(["breadth", "depth"], conflict, requestable)
    tasks = [
        _task("urgency", "classification", T(lang, "评估该客户投诉的紧急程度（高/中/低）。",
                                               "Rate the urgency of this complaint (high/medium/low)."),
              urgency, urgency_rule, specs, f, vis, dims),
        _task("next_action", "next_action", T(lang, "推荐下一步处理方式。", "Recommend the next action."),
              actions, action_rule, specs, f, vis, dims),
        _task("gaps", "gap_identification", T(lang, "为了更准确地判断紧急程度，你最需要但当前看不到的信息是什么？",
                                              "To rate the urgency more reliably, what information that you cannot "
                                              "see now would you need most?"),
              urgency, urgency_rule, specs, f, vis, dims),
    ]
    labels = {"customer.vip_level": ["VIP等级", "VIP", "会员等级", "vip level", "membership tier", "VIP status"],
              "internal_notes": ["内部备注", "质量调查", "批次", "internal notes", "batch", "quality investigation",
                                 "defect"],
              "complaint.text": ["投诉内容", "complaint text"],
              "orders.amount": ["订单金额", "金额", "order amount", "amount", "price"]}
    return {"scenario_id": f"cs-{lang}-{i + 1:02d}", "family": "customer_support", "lang": lang,
            "title": T(lang, f"客户投诉：{product}", f"Customer complaint: {product}"), "ground_truth": gt,
            "sources": sources, "summaries": summaries, "field_labels": labels,
            "leak_markers": {"internal_notes": [batch]},
            "policies": [tier1, lead], "tasks": tasks}


# ---------------------------------------------------------------------------------------- due diligence
DD_VARIANTS = [
    ("zh", dict(losses=True, litigation=True, sanctions=False, owner_change=False), False, True),
    ("zh", dict(losses=False, litigation=False, sanctions=True, owner_change=False), True, False),
    ("zh", dict(losses=False, litigation=True, sanctions=False, owner_change=True), True, True),
    ("en", dict(losses=True, litigation=False, sanctions=False, owner_change=False), False, False),
    ("en", dict(losses=False, litigation=False, sanctions=False, owner_change=True), True, True),
    ("en", dict(losses=True, litigation=True, sanctions=True, owner_change=True), False, False),
]
DD_COMPANIES = {"zh": ["华信精密制造有限公司", "宏远物流股份有限公司", "蓝海数据科技有限公司"],
                "en": ["Northwind Components Ltd", "Harbor Freight Systems Inc", "Bluewave Analytics LLC"]}
DD_PEOPLE = {"zh": ["陈建国", "刘芳", "赵德明", "孙立"],
             "en": ["Peter Grant", "Linda Moore", "Victor Hale", "Sam Ortiz"]}


def due_diligence(i: int, lang: str, f: Facts, conflict: bool, requestable: bool) -> dict[str, Any]:
    k = i % 3
    company = DD_COMPANIES[lang][k]
    rep_old, rep_new = DD_PEOPLE[lang][k], DD_PEOPLE[lang][3]
    reg = ["91310115MA1K3YQ27X", "91440300MA5F8L2K1B", "91110108MA01C9XR5T"][k]
    revenue = [86_400_000, 152_300_000, 41_750_000][k]
    profit = -[5_230_000, 8_100_000, 2_640_000][k] if f["losses"] else [6_870_000, 11_400_000, 3_150_000][k]
    litigation = [
        {"case_no": f"(2022)沪0115民初{31200 + k}号" if lang == "zh" else f"CV-2022-{31200 + k}",
         "date": "2022-03-14", "type": T(lang, "买卖合同纠纷", "sales contract dispute"), "amount": 380_000,
         "status": "closed"},
    ]
    if f["litigation"]:
        litigation.append({"case_no": f"(2023)沪01民初{880 + k}号" if lang == "zh" else f"CV-2023-{880 + k}",
                           "date": "2023-09-02", "type": T(lang, "专利侵权", "patent infringement"),
                           "amount": [12_500_000, 9_800_000, 7_300_000][k], "status": "pending"})
    else:
        litigation.append({"case_no": f"(2023)沪01民初{880 + k}号" if lang == "zh" else f"CV-2023-{880 + k}",
                           "date": "2023-09-02", "type": T(lang, "劳动争议", "labour dispute"), "amount": 120_000,
                           "status": "pending"})
    gt: dict[str, Any] = {
        "company": {"name": company, "registration_no": reg, "founded": ["2012-05-18", "2008-11-03", "2016-07-21"][k],
                    "legal_rep": rep_new if f["owner_change"] else rep_old,
                    "registered_capital": [50_000_000, 120_000_000, 20_000_000][k]},
        "financials": [{"year": 2022, "revenue": revenue, "net_profit": abs(profit) // 2, "debt_ratio": 0.48},
                       {"year": 2023, "revenue": revenue, "net_profit": profit, "debt_ratio": 0.71 if f["losses"]
                        else 0.42}],
        "litigation": litigation,
        "sanctions_screening": {"result": "match" if f["sanctions"] else "no_match",
                                "list": "OFAC SDN" if f["sanctions"] else "-", "checked_at": "2023-10-20"},
        "analyst_notes": T(lang, f"实际控制人{'于2023年8月变更为' + rep_new if f['owner_change'] else '近三年未变更'}。"
                                 f"{'制裁筛查命中，需法务复核。' if f['sanctions'] else '制裁筛查未命中。'}",
                           f"Controlling shareholder {'changed to ' + rep_new + ' in Aug 2023' if f['owner_change'] else 'unchanged for three years'}. "  # noqa: E501
                           + ("Sanctions screening hit; legal review required." if f["sanctions"]
                              else "No sanctions hit.")),
    }
    sources: dict[str, Any] = {
        "company": {"endpoint": "GET /registry/companies/{id}", "as_of": "2023-10-20"},
        "financials": {"endpoint": "GET /filings/{id}/annual", "as_of": "2023-04-30"},
        "litigation": {"endpoint": "GET /courts/cases?party={id}", "as_of": "2023-10-18", "preloaded": not requestable,
                       "cost": 2},
        "sanctions_screening": {"endpoint": "POST /screening/sanctions", "as_of": "2023-10-20"},
        "analyst_notes": {"endpoint": "GET /dd/notes/{id}", "as_of": "2023-10-21"},
    }
    if conflict:
        gt["registry_snapshot"] = {"legal_rep": rep_old if f["owner_change"] else rep_new,
                                   "captured_at": "2022-12-31"}
        sources["registry_snapshot"] = {"endpoint": "data-vendor snapshot", "as_of": "2022-12-31", "stale": True}
    summaries = {"analyst_notes": T(lang, ("控制人近期有变更。" if f["owner_change"] else "控制人稳定。") +
                                    ("存在制裁命中。" if f["sanctions"] else "无制裁命中。"),
                                    ("Recent change of control. " if f["owner_change"] else "Control is stable. ") +
                                    ("Sanctions hit." if f["sanctions"] else "No sanctions hit."))}
    junior = {"role": "junior_analyst", "description": T(lang, "初级分析师", "junior analyst"),
              "allowed_evidence": {"company": ["name", "registration_no", "founded"],
                                   "financials": ["year", "revenue", "net_profit"],
                                   "litigation": {"fields": ["case_no", "date", "type", "status"],
                                                  "rows": {"field": "status", "in": ["closed"]}},
                                   **({"registry_snapshot": "*"} if conflict else {})},
              "masking_rules": {"company.registration_no": "keep_last:4", "financials.revenue":
                                f"bucket:10000000,100000000:{T(lang, '元', ' CNY')}",
                                "financials.net_profit": f"bucket:0:{T(lang, '元', ' CNY')}"}}
    officer = {"role": "compliance_officer", "description": T(lang, "合规官", "compliance officer"),
               "allowed_evidence": {"company": "*", "litigation": "*", "sanctions_screening": "*",
                                    "analyst_notes": True, **({"registry_snapshot": "*"} if conflict else {})},
               "masking_rules": {"company.legal_rep": "mask_middle", "company.registration_no": "mask_middle",
                                 "litigation.amount": f"bucket:5000000:{T(lang, '元', ' CNY')}",
                                 "analyst_notes": "summarise"}}
    vis = {"junior_analyst": {"losses": "visible", "litigation": "hidden", "sanctions": "hidden",
                              "owner_change": "stale" if conflict else "hidden"},
           "compliance_officer": {"losses": "hidden", "litigation": "visible", "sanctions": "visible",
                                  "owner_change": "visible"}}
    specs = [FactSpec("sanctions", "sanctions_screening.result"), FactSpec("litigation", "litigation.amount"),
             FactSpec("losses", "financials.net_profit"), FactSpec("owner_change", "company.legal_rep")]
    risk = [T(lang, "高", "high"), T(lang, "中", "medium"), T(lang, "低", "low")]

    def risk_rule(x: Facts) -> str:
        if x["sanctions"]:
            return risk[0]
        return _level(sum(map(int, (x["losses"], x["litigation"], x["owner_change"]))), risk, high=2, mid=1)

    decisions = ["reject", "approve_with_conditions", "approve"]

    def decision_rule(x: Facts) -> str:
        return decisions[[risk[0], risk[1], risk[2]].index(risk_rule(x))]

    dims = _dims(["breadth", "depth"], conflict, requestable)
    tasks = [
        _task("risk", "classification", T(lang, f"评估与{company}合作的风险等级（高/中/低）。",
                                            f"Rate the risk of doing business with {company} (high/medium/low)."),
              risk, risk_rule, specs, f, vis, dims),
        _task("decision", "next_action", T(lang, "给出下一步建议：reject、approve_with_conditions 或 approve。",
                                           "Recommend the next step: reject, approve_with_conditions or approve."),
              decisions, decision_rule, specs, f, vis, dims),
        _plan_task(lang, risk, risk_rule, specs, f, vis, dims),
    ]
    labels = {"sanctions_screening.result": ["制裁", "sanctions", "screening", "OFAC", "watch list"],
              "litigation.amount": ["诉讼", "未结案", "litigation", "lawsuit", "pending case", "court"],
              "financials.net_profit": ["净利润", "亏损", "利润", "net profit", "losses", "profit"],
              "company.legal_rep": ["法定代表人", "实际控制人", "控制人", "legal representative", "ownership",
                                    "controlling shareholder", "change of control"]}
    return {"scenario_id": f"dd-{lang}-{i + 1:02d}", "family": "due_diligence", "lang": lang,
            "title": T(lang, f"尽职调查：{company}", f"Due diligence: {company}"), "ground_truth": gt,
            "sources": sources, "summaries": summaries, "field_labels": labels,
            "leak_markers": {"sanctions_screening": ["OFAC"]}, "policies": [junior, officer], "tasks": tasks}


# ------------------------------------------------------------------------------------- compliance audit
CA_VARIANTS = [
    ("zh", dict(unapproved=True, threshold=False, terminated=False, exception=False), False, True),
    ("zh", dict(unapproved=False, threshold=True, terminated=True, exception=False), True, False),
    ("zh", dict(unapproved=True, threshold=True, terminated=False, exception=True), False, False),
    ("en", dict(unapproved=False, threshold=True, terminated=False, exception=False), False, True),
    ("en", dict(unapproved=True, threshold=False, terminated=True, exception=True), True, False),
    ("en", dict(unapproved=False, threshold=False, terminated=False, exception=False), True, True),
]
CA_PEOPLE = {"zh": ["周婷", "吴磊", "郑海波", "钱多多"], "en": ["Grace Lin", "Owen Price", "Nina Shah", "Carl Webb"]}


def compliance_audit(i: int, lang: str, f: Facts, conflict: bool, requestable: bool) -> dict[str, Any]:
    k = i % 3
    people = CA_PEOPLE[lang]
    user = people[k]
    access = [
        {"time": "2023-09-03 22:14", "user": user, "action": "export_customer_table",
         "approved_by": None if f["unapproved"] else people[3]},
        {"time": "2023-09-20 10:02", "user": people[(k + 1) % 3], "action": "read_report", "approved_by": people[3]},
        {"time": "2023-09-28 15:40", "user": user if f["terminated"] else people[(k + 2) % 3],
         "action": "login_admin_console", "approved_by": people[3]},
    ]
    claims = [
        {"claim_id": f"EXP-{5100 + i}", "employee": people[(k + 1) % 3], "amount": 1280.0, "approvals": 1,
         "card_number": "6225880137706612"},
        {"claim_id": f"EXP-{5200 + i}", "employee": people[(k + 2) % 3],
         "amount": [18_600.0, 9_450.0, 7_720.0][k] if f["threshold"] else [3_480.0, 2_150.0, 4_260.0][k],
         "approvals": 1, "card_number": ["6225880142231987", "6222600910023344", "4000123412341234"][k]},
    ]
    gt: dict[str, Any] = {
        "control": {"control_id": f"AC-{7 + k}", "name": T(lang, "特权访问与费用审批控制", "privileged access and "
                                                           "expense approval control"), "owner": people[3],
                    "last_tested": "2023-03-31"},
        "access_log": access,
        "expense_claims": claims,
        "policy_doc": T(lang, "单笔报销超过5000元需两级审批；特权操作须事先审批；离职员工账号须在离职当日停用。",
                        "Claims above 5000 CNY need two approvals; privileged actions need prior approval; accounts of "
                        "leavers are disabled on their last day."),
        "hr_system": {"employee": user, "status": "terminated" if f["terminated"] else "active",
                      "last_day": "2023-09-15" if f["terminated"] else None},
        "audit_notes": T(lang, "已登记例外：" + ("导出操作经CISO口头批准，补登记录编号EXC-2023-41。"
                                                 if f["exception"] else "无。"),
                         "Registered exception: " + ("the export was verbally approved by the CISO, record "
                                                     "EXC-2023-41." if f["exception"] else "none.")),
    }
    sources: dict[str, Any] = {
        "access_log": {"endpoint": "GET /siem/access?system=crm", "as_of": "2023-10-01"},
        "expense_claims": {"endpoint": "GET /erp/claims?quarter=Q3", "as_of": "2023-10-01"},
        "hr_system": {"endpoint": "GET /hr/employees/{id}", "as_of": "2023-10-01"},
        "audit_notes": {"endpoint": "GET /grc/exceptions", "as_of": "2023-09-30", "preloaded": not requestable,
                        "cost": 2},
    }
    if conflict:
        gt["hr_roster_cache"] = {"employee": user, "status": "active" if f["terminated"] else "terminated",
                                 "exported_at": "2023-08-31"}
        sources["hr_roster_cache"] = {"endpoint": "hr-roster.csv (monthly export)", "as_of": "2023-08-31",
                                      "stale": True}
    summaries = {"audit_notes": T(lang, "有一项已登记的例外覆盖该导出操作。" if f["exception"] else "没有登记例外。",
                                  "A registered exception covers the export." if f["exception"] else
                                  "No registered exception.")}
    cur = T(lang, "元", " CNY")
    auditor = {"role": "internal_auditor", "description": T(lang, "内部审计员", "internal auditor"),
               "allowed_evidence": {"control": "*", "access_log": {"fields": "*", "rows": {"limit": 2,
                                                                                          "order_by": "time"}},
                                    "expense_claims": ["claim_id", "amount", "approvals"], "policy_doc": True,
                                    **({"hr_roster_cache": "*"} if conflict else {})},
               "masking_rules": {"access_log.user": "mask_middle", "control.owner": "mask_middle",
                                 "access_log.approved_by": "mask_middle",
                                 "expense_claims.amount": f"bucket:5000:{cur}"}}
    manager = {"role": "compliance_manager", "description": T(lang, "合规经理", "compliance manager"),
               "allowed_evidence": {"control": "*", "access_log": "*", "policy_doc": True, "hr_system": "*",
                                    "audit_notes": True},
               "masking_rules": {"access_log.user": "mask_middle", "access_log.approved_by": "mask_middle",
                                 "hr_system.employee": "mask_middle", "control.owner": "mask_middle",
                                 "audit_notes": "summarise"}}
    vis = {"internal_auditor": {"unapproved": "hidden", "threshold": "visible",
                                "terminated": "stale" if conflict else "hidden", "exception": "hidden"},
           "compliance_manager": {"unapproved": "visible", "threshold": "hidden", "terminated": "visible",
                                  "exception": "visible"}}
    specs = [FactSpec("terminated", "hr_system.status"), FactSpec("unapproved", "access_log.approved_by"),
             FactSpec("threshold", "expense_claims.amount"), FactSpec("exception", "audit_notes")]
    levels = [T(lang, "重大", "major"), T(lang, "一般", "minor"), T(lang, "无", "none")]

    def finding_rule(x: Facts) -> str:
        score = int(x["unapproved"]) + int(x["threshold"]) + 2 * int(x["terminated"]) - int(x["exception"]
                                                                                             and x["unapproved"])
        return _level(score, levels, high=2, mid=1)

    causes = ["access_deprovisioning_failure", "approval_workflow_bypass", "threshold_misconfiguration", "no_issue"]

    def cause_rule(x: Facts) -> str:
        if x["terminated"]:
            return causes[0]
        if x["unapproved"] and not x["exception"]:
            return causes[1]
        return causes[2] if x["threshold"] else causes[3]

    dims = _dims(["breadth", "depth"], conflict, requestable)
    tasks = [
        _task("finding", "classification", T(lang, "给出该控制的审计发现等级（重大/一般/无）。",
                                               "Rate the audit finding for this control (major/minor/none)."),
              levels, finding_rule, specs, f, vis, dims),
        _task("root_cause", "root_cause", T(lang, "最可能的根本原因是什么？", "What is the most likely root cause?"),
              causes, cause_rule, specs, f, vis, dims),
        _task("gaps", "gap_identification", T(lang, "要确定发现等级，你还缺少哪些关键信息？",
                                              "Which key information are you missing to settle the finding level?"),
              levels, finding_rule, specs, f, vis, dims),
    ]
    labels = {"hr_system.status": ["离职", "人事", "在职状态", "HR", "terminated", "employment status", "leaver"],
              "access_log.approved_by": ["审批人", "审批记录", "访问日志", "approval", "approved_by", "access log"],
              "expense_claims.amount": ["报销金额", "金额", "claim amount", "amount", "expense"],
              "audit_notes": ["例外", "审计备注", "exception", "audit notes"]}
    return {"scenario_id": f"ca-{lang}-{i + 1:02d}", "family": "compliance_audit", "lang": lang,
            "title": T(lang, f"合规审计：控制 AC-{7 + k}", f"Compliance audit: control AC-{7 + k}"), "ground_truth": gt,
            "sources": sources, "summaries": summaries, "field_labels": labels,
            "leak_markers": {"audit_notes": ["EXC-2023-41", "CISO"]}, "policies": [auditor, manager], "tasks": tasks}


# ----------------------------------------------------------------------------------- security incident
SI_VARIANTS = [
    ("zh", dict(bruteforce=True, malware=False, bad_ip=True, critical=False), False, True),
    ("zh", dict(bruteforce=False, malware=True, bad_ip=False, critical=True), True, False),
    ("zh", dict(bruteforce=False, malware=False, bad_ip=False, critical=False), True, True),
    ("en", dict(bruteforce=True, malware=True, bad_ip=True, critical=True), False, False),
    ("en", dict(bruteforce=False, malware=False, bad_ip=True, critical=True), False, True),
    ("en", dict(bruteforce=True, malware=False, bad_ip=False, critical=False), True, False),
]


def security_incident(i: int, lang: str, f: Facts, conflict: bool, requestable: bool) -> dict[str, Any]:
    k = i % 3
    host = ["fin-db-02", "hr-app-07", "web-edge-11"][k]
    ip = ["185.220.101.47", "45.155.205.233", "103.75.190.12"][k]
    user = ["j.wang", "l.chen", "m.ortiz"][k]
    auth = [{"time": f"2023-11-02 03:1{m}", "user": user, "src_ip": ip, "result": "failure"} for m in range(4)]
    auth.append({"time": "2023-11-02 03:19", "user": user, "src_ip": ip,
                 "result": "success" if f["bruteforce"] else "failure"})
    edr = [{"time": "2023-11-02 03:25", "host": host, "process": "powershell.exe -enc JABzAD0A..." if f["malware"]
            else "svchost.exe", "sha256": ["9f86d081884c7d65", "2c26b46b68ffc68f", "fcde2b2edba56bf4"][k]}]
    gt: dict[str, Any] = {
        "alert": {"id": f"ALRT-{9100 + i}", "rule": T(lang, "同一账号多次登录失败", "multiple failed logins for one "
                                                       "account"), "host": host, "time": "2023-11-02 03:20"},
        "auth_logs": auth,
        "edr_events": edr,
        "threat_intel": {"ip": ip, "reputation": "malicious" if f["bad_ip"] else "unknown",
                         "campaign": "FIN7-2023Q4" if f["bad_ip"] else None},
        "cmdb": {"host": host, "criticality": "tier0" if f["critical"] else "tier3",
                 "owner": T(lang, "财务系统组", "finance systems team")},
        "incident_notes": T(lang, "值班记录：" + ("检测到编码的PowerShell执行。" if f["malware"] else "未见可疑进程。"),
                            "On-call log: " + ("encoded PowerShell execution seen." if f["malware"] else
                                               "no suspicious process seen.")),
    }
    sources: dict[str, Any] = {
        "alert": {"endpoint": "GET /siem/alerts/{id}", "as_of": "2023-11-02 03:20"},
        "auth_logs": {"endpoint": "GET /siem/auth?user={user}", "as_of": "2023-11-02 03:30"},
        "edr_events": {"endpoint": "GET /edr/hosts/{host}/events", "as_of": "2023-11-02 03:30",
                       "preloaded": not requestable, "cost": 2},
        "threat_intel": {"endpoint": "GET /ti/ip/{ip}", "as_of": "2023-11-02 03:31"},
        "cmdb": {"endpoint": "GET /cmdb/hosts/{host}", "as_of": "2023-11-01"},
    }
    if conflict:
        gt["asset_cache"] = {"host": host, "criticality": "tier3" if f["critical"] else "tier0",
                             "cached_at": "2023-03-15"}
        sources["asset_cache"] = {"endpoint": "asset-inventory cache", "as_of": "2023-03-15", "stale": True}
    summaries = {"edr_events": T(lang, "主机上出现可疑的编码PowerShell进程。" if f["malware"] else "未发现可疑进程。",
                                 "Suspicious encoded PowerShell process on the host." if f["malware"] else
                                 "No suspicious process.")}
    tier1 = {"role": "soc_tier1", "description": T(lang, "一线安全分析员", "tier-1 SOC analyst"),
             "allowed_evidence": {"alert": "*", "auth_logs": {"fields": ["time", "user", "src_ip", "result"],
                                                              "rows": {"field": "result", "in": ["failure"]}},
                                  "threat_intel": ["reputation"], **({"asset_cache": "*"} if conflict else {})},
             "masking_rules": {"auth_logs.src_ip": "mask_middle", "auth_logs.user": "mask_middle"}}
    lead = {"role": "ir_lead", "description": T(lang, "应急响应负责人", "incident response lead"),
            "allowed_evidence": {"alert": "*", "auth_logs": "*", "edr_events": True, "cmdb": "*",
                                 "incident_notes": True},
            "masking_rules": {"edr_events": "summarise", "auth_logs.src_ip": "keep_last:2"}}
    vis = {"soc_tier1": {"bruteforce": "hidden", "malware": "hidden", "bad_ip": "visible",
                         "critical": "stale" if conflict else "hidden"},
           "ir_lead": {"bruteforce": "visible", "malware": "visible", "bad_ip": "hidden", "critical": "visible"}}
    specs = [FactSpec("malware", "edr_events"), FactSpec("bruteforce", "auth_logs.result"),
             FactSpec("bad_ip", "threat_intel.reputation"), FactSpec("critical", "cmdb.criticality")]
    sev = ["P1", "P2", "P3"]

    def severity_rule(x: Facts) -> str:
        return _level(sum(map(int, (x["bruteforce"], x["malware"], x["bad_ip"], x["critical"]))), sev, high=3, mid=2)

    causes = ["credential_compromise", "malware_infection", "false_positive"]

    def cause_rule(x: Facts) -> str:
        if x["bruteforce"]:
            return causes[0]
        if x["malware"]:
            return causes[1]
        return causes[0] if x["bad_ip"] and x["critical"] else causes[2]

    actions = ["isolate_host", "reset_credentials", "monitor"]

    def action_rule(x: Facts) -> str:
        return actions[0] if x["malware"] else actions[1] if x["bruteforce"] else actions[2]

    dims = _dims(["breadth", "depth"], conflict, requestable)
    tasks = [
        _task("severity", "classification", T(lang, "给出事件等级（P1/P2/P3）。", "Assign a severity (P1/P2/P3)."),
              sev, severity_rule, specs, f, vis, dims),
        _task("root_cause", "root_cause", T(lang, "最可能的根本原因是什么？", "What is the most likely root cause?"),
              causes, cause_rule, specs, f, vis, dims),
        _task("next_action", "next_action", T(lang, "下一步应采取什么行动？", "What should be done next?"),
              actions, action_rule, specs, f, vis, dims),
        _plan_task(lang, sev, severity_rule, specs, f, vis, dims),
    ]
    labels = {"edr_events": ["EDR", "进程", "终端", "process", "endpoint events"],
              "auth_logs.result": ["登录结果", "成功登录", "登录成功", "login result", "successful login", "success"],
              "threat_intel.reputation": ["威胁情报", "IP信誉", "threat intel", "reputation"],
              "cmdb.criticality": ["资产等级", "重要性", "CMDB", "criticality", "asset tier", "tier0"]}
    return {"scenario_id": f"si-{lang}-{i + 1:02d}", "family": "security_incident", "lang": lang,
            "title": T(lang, f"安全事件：{host}", f"Security incident: {host}"), "ground_truth": gt,
            "sources": sources, "summaries": summaries, "field_labels": labels,
            "leak_markers": {"threat_intel": ["FIN7"], "edr_events": ["powershell"]},
            "policies": [tier1, lead], "tasks": tasks}


FAMILY_BUILDERS = [(customer_support, CS_VARIANTS), (due_diligence, DD_VARIANTS),
                   (compliance_audit, CA_VARIANTS), (security_incident, SI_VARIANTS)]


def build_dataset() -> list[dict[str, Any]]:
    out = []
    for builder, variants in FAMILY_BUILDERS:
        for i, (lang, facts, conflict, requestable) in enumerate(variants):
            out.append(builder(i, lang, dict(facts), conflict, requestable))
    return out


def dataset_text() -> str:
    return "".join(json.dumps(s, ensure_ascii=False, sort_keys=False) + "\n" for s in build_dataset())


def write_dataset(path: Path) -> int:
    text = dataset_text()
    path.write_text(text, encoding="utf-8")
    return text.count("\n")
