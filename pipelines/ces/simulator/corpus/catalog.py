"""The static make-up of each synthetic app: agents, tools, guardrails, models, evaluations.

Conversations, traces and evaluation latency reports all draw from one catalog per app, so a
tool that appears in a trace is the same tool (same resource name, same display name) that the
evaluation runs report latencies for.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pipelines.ces.simulator.corpus.protojson import between
from pipelines.ces.simulator.corpus.scale import SimulatorScale
from pipelines.ces.simulator.corpus.utterances import (
    SALES_AGENT_TEXTS,
    SALES_USER_TEXTS,
    SUPPORT_AGENT_TEXTS,
    SUPPORT_USER_TEXTS,
)


@dataclass(frozen=True)
class Agent:
    agent_id: str
    display_name: str
    name: str
    """Full resource name, `{app}/agents/{agent_id}`."""


@dataclass(frozen=True)
class Tool:
    """A tool agents can call: a persistent tool (`tool`), a toolset tool, or an agent tool."""

    display_name: str
    tool: str | None
    toolset: str | None
    tool_id: str | None
    args: tuple[tuple[str, str], ...]
    """(argument name, value kind) pairs; kinds are keys of `VALUES`."""
    output: tuple[tuple[str, str], ...]
    sub_agent: Agent | None = None
    """For an agent tool: the agent that runs on behalf of the call and issues its own calls."""
    sub_tools: tuple[str, ...] = ()
    """Display names of the tools the sub-agent calls."""
    client: bool = False
    """A client function: the client runs it and sends its response back as input."""

    def identifier(self) -> dict[str, Any]:
        """The `tool_identifier` union member as it appears in ToolCall, ToolResponse and ToolLatency."""
        if self.tool is not None:
            return {"tool": self.tool}
        return {"toolsetTool": {"toolset": self.toolset, "toolId": self.tool_id}}


@dataclass(frozen=True)
class Guardrail:
    name: str
    display_name: str


@dataclass(frozen=True)
class Callback:
    stage: str
    description: str


@dataclass(frozen=True)
class Evaluation:
    name: str
    display_name: str
    kind: str
    """GOLDEN or SCENARIO."""


@dataclass(frozen=True)
class Dataset:
    name: str
    evaluations: tuple[Evaluation, ...]


@dataclass(frozen=True)
class Persona:
    name: str
    display_name: str
    description: str
    personality: str
    speech: tuple[float, str, str] | None = None
    """(speaking rate, background environment, voice id) of the simulated caller's voice, if set."""


@dataclass(frozen=True)
class AppCatalog:
    app_name: str
    root_agent: Agent
    sub_agents: tuple[Agent, ...]
    tools: tuple[Tool, ...]
    guardrails: tuple[Guardrail, ...]
    callbacks: tuple[Callback, ...]
    text_models: tuple[str, ...]
    audio_model: str
    versions: tuple[tuple[str, str], ...]
    """(resource name, display name), oldest first."""
    deployments: tuple[str, ...]
    evaluations: tuple[Evaluation, ...]
    datasets: tuple[Dataset, ...]
    personas: tuple[Persona, ...]
    user_texts: tuple[str, ...]
    agent_texts: tuple[str, ...]

    def tool(self, display_name: str) -> Tool:
        return next(tool for tool in self.tools if tool.display_name == display_name)


VALUES: dict[str, Callable[[random.Random, AppCatalog], Any]] = {
    "order_id": lambda rng, _: f"A-{between(rng, 10000, 99999)}",
    "tracking": lambda rng, _: f"1Z{rng.getrandbits(40):010X}",
    "customer_id": lambda rng, _: f"C-{between(rng, 100000, 999999)}",
    "subject": lambda rng, _: rng.choice(("Damaged item", "Late delivery", "Wrong size", "Billing question")),
    "priority": lambda rng, _: rng.choice(("low", "normal", "high", "urgent")),
    "amount": lambda rng, _: round(rng.uniform(5, 480), 2),
    "order_status": lambda rng, _: rng.choice(("PROCESSING", "SHIPPED", "DELIVERED", "DELAYED")),
    "date": lambda rng, _: f"2026-11-{between(rng, 2, 28):02d}",
    "small_int": lambda rng, _: between(rng, 0, 12),
    "carrier": lambda rng, _: rng.choice(("UPS", "DHL", "FedEx", "La Poste")),
    "city": lambda rng, _: rng.choice(("Frankfurt", "Lyon", "Osaka", "Denver", "Leeds")),
    "bool": lambda rng, _: rng.random() < 0.5,
    "tier": lambda rng, _: rng.choice(("bronze", "silver", "gold", "platinum")),
    "ticket_id": lambda rng, _: f"T-{rng.getrandbits(32):08x}",
    "refund_state": lambda rng, _: rng.choice(("PENDING", "APPROVED")),
    "request": lambda rng, catalog: rng.choice(catalog.user_texts),
    "summary": lambda rng, catalog: rng.choice(catalog.agent_texts),
    "query": lambda rng, _: rng.choice(("x200 laptop", "usb-c dock", "noise cancelling headset")),
    "sku": lambda rng, _: f"SKU-{between(rng, 1000, 9999)}",
    "region": lambda rng, _: rng.choice(("eu-central", "us-east", "ap-northeast")),
    "timezone": lambda rng, _: rng.choice(("Europe/Berlin", "America/New_York", "Asia/Tokyo")),
}
"""How each value kind of a tool's `args` and `output` is drawn."""


# (agent_id, display name): the first is the root agent.
_SUPPORT_AGENTS = (
    ("support-concierge", "Support Concierge"),
    ("billing", "Billing Specialist"),
    ("returns", "Returns Desk"),
    ("tech-support", "Tech Support"),
)
_SALES_AGENTS = (
    ("sales-assistant", "Sales Assistant"),
    ("quotes", "Quote Builder"),
    ("contracts", "Contract Architect"),
)

_CLIENT_FUNCTIONS = frozenset({"track_shipment", "check_inventory"})
# display name, toolset (None: persistent tool), tool id in the toolset, args, output, sub-agent id, sub tools
_SUPPORT_TOOLS: tuple[tuple[Any, ...], ...] = (
    (
        "lookup_order",
        None,
        None,
        (("orderId", "order_id"),),
        (("status", "order_status"), ("eta", "date"), ("itemCount", "small_int")),
        None,
        (),
    ),
    (
        "track_shipment",
        None,
        None,
        (("trackingNumber", "tracking"),),
        (("carrier", "carrier"), ("lastScan", "city"), ("delivered", "bool")),
        None,
        (),
    ),
    (
        "get_customer",
        "crm",
        "get_customer",
        (("customerId", "customer_id"),),
        (("tier", "tier"), ("openTickets", "small_int")),
        None,
        (),
    ),
    (
        "create_ticket",
        "zendesk",
        "create_ticket",
        (("subject", "subject"), ("priority", "priority")),
        (("ticketId", "ticket_id"),),
        None,
        (),
    ),
    (
        "issue_refund",
        "payments",
        "refund",
        (("orderId", "order_id"), ("amount", "amount")),
        (("refundId", "ticket_id"), ("state", "refund_state")),
        None,
        (),
    ),
    (
        "billing_agent",
        None,
        None,
        (("request", "request"),),
        (("summary", "summary"),),
        "billing",
        ("get_customer", "issue_refund"),
    ),
)
_SALES_TOOLS: tuple[tuple[Any, ...], ...] = (
    (
        "search_catalog",
        None,
        None,
        (("query", "query"), ("maxResults", "small_int")),
        (("hits", "small_int"), ("topSku", "sku")),
        None,
        (),
    ),
    (
        "check_inventory",
        None,
        None,
        (("sku", "sku"), ("region", "region")),
        (("available", "small_int"), ("warehouse", "city")),
        None,
        (),
    ),
    (
        "get_account",
        "crm",
        "get_account",
        (("accountId", "customer_id"),),
        (("tier", "tier"), ("seats", "small_int")),
        None,
        (),
    ),
    (
        "create_quote",
        "cpq",
        "create_quote",
        (("sku", "sku"), ("quantity", "small_int")),
        (("quoteId", "ticket_id"), ("total", "amount")),
        None,
        (),
    ),
    (
        "book_demo",
        "calendar",
        "book_meeting",
        (("date", "date"), ("timezone", "timezone")),
        (("meetingId", "ticket_id"),),
        None,
        (),
    ),
    (
        "contract_agent",
        None,
        None,
        (("request", "request"),),
        (("summary", "summary"),),
        "contracts",
        ("get_account", "create_quote"),
    ),
)

_GUARDRAILS = (
    ("pii-redaction", "PII redaction"),
    ("prompt-injection", "Prompt injection shield"),
    ("toxicity", "Toxicity filter"),
)
_CALLBACKS = (
    ("before_agent", "load customer profile"),
    ("before_model", "inject policy snippets"),
    ("after_model", "mask account numbers"),
    ("before_tool", "validate tool arguments"),
    ("after_tool", "normalise tool output"),
)
_SUPPORT_EVALUATIONS = (
    ("refund-happy-path", "Refund happy path", "GOLDEN"),
    ("order-status", "Order status lookup", "GOLDEN"),
    ("address-change", "Address change", "GOLDEN"),
    ("shipping-delay", "Shipping delay apology", "GOLDEN"),
    ("angry-customer", "Angry customer de-escalation", "SCENARIO"),
    ("multi-order-refund", "Refund across several orders", "SCENARIO"),
    ("non-english-caller", "Caller switches language", "SCENARIO"),
)
_SALES_EVALUATIONS = (
    ("catalog-search", "Catalog search", "GOLDEN"),
    ("quote-creation", "Quote creation", "GOLDEN"),
    ("demo-booking", "Demo booking", "GOLDEN"),
    ("price-objection", "Price objection handling", "SCENARIO"),
    ("enterprise-negotiation", "Enterprise negotiation", "SCENARIO"),
)
_PERSONAS = (
    ("impatient-shopper", "Impatient shopper", "Wants answers fast", "terse, interrupts, mildly annoyed"),
    ("first-time-buyer", "First-time buyer", "Unsure how things work", "polite, asks follow-up questions"),
    ("procurement-lead", "Procurement lead", "Negotiates hard on price", "formal, detail-oriented"),
)
_PERSONA_SPEECH = {
    "impatient-shopper": (1.35, "TRAFFIC", "en-US-Wavenet-D"),
    "first-time-buyer": (0.85, "KIDS_NOISE", "en-GB-Standard-A"),
}
"""How a persona's simulated caller sounds in audio evaluations; a persona without one uses the defaults."""
_DOMAINS = (
    (_SUPPORT_AGENTS, _SUPPORT_TOOLS, _SUPPORT_EVALUATIONS, SUPPORT_USER_TEXTS, SUPPORT_AGENT_TEXTS),
    (_SALES_AGENTS, _SALES_TOOLS, _SALES_EVALUATIONS, SALES_USER_TEXTS, SALES_AGENT_TEXTS),
)


@lru_cache(maxsize=64)
def app_catalog(scale: SimulatorScale, app_index: int) -> AppCatalog:
    """The catalog of app `app_index` of `scale`; apps alternate between two business domains."""
    app = scale.app_names[app_index]
    agent_rows, tool_rows, evaluation_rows, user_texts, agent_texts = _DOMAINS[app_index % len(_DOMAINS)]
    agents = tuple(Agent(agent_id, display, f"{app}/agents/{agent_id}") for agent_id, display in agent_rows)
    by_id = {agent.agent_id: agent for agent in agents}
    tools = tuple(
        Tool(
            display_name=display,
            tool=None if toolset else f"{app}/tools/{display}",
            toolset=f"{app}/toolsets/{toolset}" if toolset else None,
            tool_id=tool_id,
            args=args,
            output=output,
            sub_agent=by_id[sub_agent] if sub_agent else None,
            sub_tools=sub_tools,
            client=display in _CLIENT_FUNCTIONS,
        )
        for display, toolset, tool_id, args, output, sub_agent, sub_tools in tool_rows
    )
    evaluations = tuple(
        Evaluation(f"{app}/evaluations/{eval_id}", display, kind)
        for eval_id, display, kind in evaluation_rows
    )
    golden = tuple(e for e in evaluations if e.kind == "GOLDEN")
    scenario = tuple(e for e in evaluations if e.kind == "SCENARIO")
    return AppCatalog(
        app_name=app,
        root_agent=agents[0],
        sub_agents=agents[1:],
        tools=tools,
        guardrails=tuple(Guardrail(f"{app}/guardrails/{gid}", display) for gid, display in _GUARDRAILS),
        callbacks=tuple(Callback(stage, description) for stage, description in _CALLBACKS),
        text_models=("gemini-2.5-flash", "gemini-2.5-pro"),
        audio_model="gemini-live-2.5-flash",
        versions=tuple((f"{app}/versions/{n}", f"v{n}.0") for n in range(1, 5)),
        deployments=(f"{app}/deployments/production", f"{app}/deployments/staging"),
        evaluations=evaluations,
        datasets=(
            Dataset(f"{app}/evaluationDatasets/golden-regression", golden),
            Dataset(f"{app}/evaluationDatasets/scenario-suite", scenario),
            Dataset(f"{app}/evaluationDatasets/full-suite", evaluations),
        ),
        personas=tuple(
            Persona(f"{app}/evaluationPersonas/{pid}", display, about, personality, _PERSONA_SPEECH.get(pid))
            for pid, display, about, personality in _PERSONAS
        ),
        user_texts=user_texts,
        agent_texts=agent_texts,
    )
