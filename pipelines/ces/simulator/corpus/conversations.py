"""Synthetic CES conversations, each rebuilt on demand from (seed, app, day, index).

The full object (`conversation`) comes from a random stream seeded by the coordinates that
also give its header (headers.py). Nothing is stored, so memory stays flat at any scale.

The output is proto3 JSON of google.cloud.ces.v1.Conversation as the service emits it, plus the
fields the reference documents ahead of the published protos (ToolCall/ToolResponse
`parentToolCallId`, `agentName`, `targetApp`; Image `altText`; Turn `userIntendedText`).
"""

from __future__ import annotations

from typing import Any

from pipelines.ces.simulator.corpus.agent_content import (
    TOOL_ERRORS,
    agent_audio,
    chips,
    new_call_id,
    tool_values,
)
from pipelines.ces.simulator.corpus.catalog import Agent, Callback, Guardrail, Tool, app_catalog
from pipelines.ces.simulator.corpus.headers import (
    ConversationHeader,
    ConversationKey,
    conversation_header,
)
from pipelines.ces.simulator.corpus.protojson import (
    NANOS_PER_MILLI,
    NANOS_PER_SECOND,
    between,
    epoch_nanos,
    seeded_random,
    timestamp,
)
from pipelines.ces.simulator.corpus.scale import SimulatorScale
from pipelines.ces.simulator.corpus.traces import ROOT_SPAN_NAME, Clock, Span, clamp_depth
from pipelines.ces.simulator.corpus.user_messages import INPUT_TYPES, LANGUAGES, user_input

_IN_PROGRESS_HOURS = 6
UNPRICED_MODEL = "support-tuned-flash"
"""A tuned model no price file lists: every UNPRICED_EVERY-th text conversation of a day uses it,
so the demo's costs name a model they cannot price."""
UNPRICED_EVERY = 8
INCIDENT_SLOWDOWN = 6
"""How many times slower tools answer on the scale's incident day (`SimulatorScale.incident_day`)."""


def conversation(scale: SimulatorScale, key: ConversationKey, as_of: int | None = None) -> dict[str, Any]:
    """The conversation at `key` (turns with messages, chunks and span trees).

    With `as_of` (ns since the epoch), it is what the server would return at that instant:
    only the turns begun by then, and no `endTime` while the conversation is still going.
    Everything else is the same as at any later instant.
    """
    return conversation_of(scale, conversation_header(scale, key), as_of)


def conversation_of(
    scale: SimulatorScale, header: ConversationHeader, as_of: int | None = None
) -> dict[str, Any]:
    """The conversation `header` heads: one of the corpus (`conversation`), or one a started
    evaluation run made (`run_conversations`)."""
    return _ConversationBuilder(scale, header).build(as_of)


def conversation_with_traces(
    scale: SimulatorScale, header: ConversationHeader
) -> tuple[dict[str, Any], tuple[Span, ...]]:
    """The conversation `header` heads, whole, and each turn's span tree (whose JSON its turns'
    `rootSpan` are), of every turn, even where the conversation predates turns."""
    builder = _ConversationBuilder(scale, header)
    return builder.build(), tuple(builder.roots)


def _message(role: str, chunks: list[dict[str, Any]], at: int) -> dict[str, Any]:
    return {"role": role, "chunks": chunks, "eventTime": timestamp(at)}


class _ConversationBuilder:
    """Walks one conversation forward in time, turn by turn, emitting messages and spans together."""

    def __init__(self, scale: SimulatorScale, header: ConversationHeader):
        key = header.key
        self.scale = scale
        self.header = header
        self.catalog = app_catalog(scale, key.app)
        self.rng = rng = seeded_random(
            scale.seed, "conversation-body", scale.app_names[key.app], key.day, key.index
        )
        self.modality = rng.choices(("text", "audio", "multimodal"), (62, 28, 10))[0]
        self.audio = self.modality == "audio"
        self.language = rng.choices([lang for lang, _ in LANGUAGES], [w for _, w in LANGUAGES])[0]
        self.clock = Clock(header.start, header.quantum, rng)
        roll = rng.random()
        self.entry_agent: Agent | None = (
            self.catalog.root_agent
            if roll < 0.8
            else rng.choice(self.catalog.sub_agents)
            if roll < 0.9
            else None
        )
        self.agent = self.entry_agent or self.catalog.root_agent
        self.model = self.catalog.audio_model if self.audio else rng.choice(self.catalog.text_models)
        if not self.audio and key.index % UNPRICED_EVERY == UNPRICED_EVERY - 1:
            self.model = UNPRICED_MODEL
        self.tool_slowdown = INCIDENT_SLOWDOWN if scale.has_incident(key.app, key.day) else 1
        self.context_tokens = between(rng, 900, 2400)
        self.simulated_caller = self.audio and header.source in ("SIMULATOR", "EVAL")
        self.input_types: set[str] = set()
        self.roots: list[Span] = []
        """Each turn's span tree, as it is built."""

    # ----------------------------------------------------------------------------- conversation
    def build(self, as_of: int | None = None) -> dict[str, Any]:
        rng, scale, header = self.rng, self.scale, self.header
        weights = [k * k for k in range(1, scale.max_turns - scale.min_turns + 2)]
        turn_count = scale.min_turns + rng.choices(range(len(weights)), weights)[0]
        self.clock.advance(200, 2_000)
        turns = []
        turn_starts = []
        for turn_index in range(turn_count):
            if turn_index:
                self.clock.advance(2_000, 45_000)
            turn_starts.append(self.clock.now)
            turns.append(self._turn(turn_index))

        out: dict[str, Any] = {"name": header.name, "startTime": timestamp(header.start)}
        open_at_window_end = self._in_progress()  # drawn either way: later draws must not shift
        end = self.clock.advance(100, 2_500)
        if as_of is None:
            finished = not open_at_window_end
        else:
            finished = end <= as_of
            turns = [turn for turn, started in zip(turns, turn_starts, strict=True) if started <= as_of]
        if finished:
            out["endTime"] = timestamp(end)
        legacy = rng.random()
        if legacy >= 0.04 and turns:  # ~4% predate turns and carry only the deprecated top-level messages
            out["turns"] = turns
            out["turnCount"] = len(turns)
        if rng.random() < 0.25:
            out["channelType"] = {"text": "TEXT", "audio": "AUDIO", "multimodal": "MULTIMODAL"}[self.modality]
        out["source"] = header.source
        out["inputTypes"] = [t for t in INPUT_TYPES if t in self.input_types]
        if self.entry_agent is not None:
            out["entryAgent"] = self.entry_agent.name
        deployment = self._deployment()
        if deployment:
            out["deployment"] = deployment
        if header.source != "EVAL" or rng.random() < 0.5:
            versions = self.catalog.versions
            version = min(
                len(versions) - 1, header.key.day * len(versions) // scale.days + (rng.random() < 0.1)
            )
            out["appVersion"] = versions[version][0]
        out["languageCode"] = self.language
        if legacy < 0.08:  # the rest of that 8% carry both
            out["messages"] = [message for turn in turns for message in turn["messages"]]
        return out

    def _in_progress(self) -> bool:
        """Only conversations that started in the last hours of the window may still be open (not
        those an evaluation run made after it: they are over when their result is)."""
        window_end = epoch_nanos(self.scale.end_date)
        recent = 0 <= window_end - self.header.start < _IN_PROGRESS_HOURS * 3600 * NANOS_PER_SECOND
        return recent and self.rng.random() < 0.5

    def _deployment(self) -> str | None:
        source, deployments = self.header.source, self.catalog.deployments
        if source == "LIVE":
            return deployments[0] if self.rng.random() < 0.9 else deployments[1]
        if source == "SIMULATOR" and self.rng.random() < 0.4:
            return deployments[1]
        return None

    # ----------------------------------------------------------------------------- one turn
    def _turn(self, turn_index: int) -> dict[str, Any]:
        rng, clock, catalog = self.rng, self.clock, self.catalog
        user_chunks, intended_text, turn_inputs = user_input(
            rng, catalog, turn_index, self.language, self.modality, self.simulated_caller
        )
        self.input_types.update(turn_inputs)
        root = Span(ROOT_SPAN_NAME, clock.now, clock.now, {})
        self.roots.append(root)
        # An event alone (a welcome) comes from the client platform, not from the person.
        role = "system" if turn_inputs == ["INPUT_TYPE_EVENT"] else "user"
        messages = [_message(role, user_chunks, root.start)]
        spans = root.children
        agent = self.agent

        if self.audio:
            spans.append(clock.leaf("VAD", {"agent": agent.display_name}, 80, 450))
        if rng.random() < 0.7:
            spans.append(self._guardrail(agent, catalog.guardrails[rng.randrange(2)]))
        if rng.random() < 0.45:
            spans.append(self._callback(agent, catalog.callbacks[0]))
        calls = rng.choices((0, 1, 2), (45, 40, 15))[0]
        tools = [rng.choice(catalog.tools) for _ in range(calls)]
        first_llm = self._llm(agent, output_tokens=(8, 60) if tools else (20, 220))
        spans.append(first_llm)

        if tools:
            call_ids = [new_call_id(self.rng) for _ in tools]
            args = [self._values(tool.args) for tool in tools]
            messages.append(
                _message(
                    "agent",
                    [
                        self._tool_call(tool, call_id, arg, agent, parent_id=None)
                        for tool, call_id, arg in zip(tools, call_ids, args, strict=True)
                    ],
                    first_llm.end,
                )
            )
            response_chunks: list[dict[str, Any]] = []
            for tool, call_id in zip(tools, call_ids, strict=True):
                spans.append(self._tool_span(tool, call_id, agent, None, response_chunks))
            # A client function's response comes back from the client, as the user's input.
            clients = {tool.display_name for tool in tools if tool.client}
            from_client = [
                c for c in response_chunks if c.get("toolResponse", {}).get("displayName") in clients
            ]
            if len(from_client) < len(response_chunks):
                messages.append(
                    _message("agent", [c for c in response_chunks if c not in from_client], clock.now)
                )
            if from_client:
                messages.append(_message("user", from_client, clock.now))
                self.input_types.add("INPUT_TYPE_TOOL_RESPONSE")

        final_chunks: list[dict[str, Any]] = []
        transfer_to = self._transfer_target(agent)
        if transfer_to is not None:
            final_chunks.append(
                {"agentTransfer": {"targetAgent": transfer_to.name, "displayName": transfer_to.display_name}}
            )
            agent_span = clock.open(f"AGENT:{transfer_to.agent_id}", {"agent": transfer_to.display_name})
            agent_span.children.append(self._llm(transfer_to, output_tokens=(20, 220)))
            spans.append(clock.close(agent_span))
            final_llm = agent_span.children[-1]
            self.agent = agent = transfer_to
        elif tools:
            final_llm = self._llm(agent, output_tokens=(20, 220))
            spans.append(final_llm)
        else:
            final_llm = first_llm
        first_output = final_llm.start + final_llm.attributes["time to first chunk (ms)"] * NANOS_PER_MILLI

        if rng.random() < 0.3:
            spans.append(self._callback(agent, catalog.callbacks[2]))
        if rng.random() < 0.3:
            spans.append(self._guardrail(agent, catalog.guardrails[2]))
        if self.audio:
            tts = clock.leaf("TTS", {"agent": agent.display_name, "voice": "en-US-Chirp3-HD"}, 120, 700)
            spans.append(tts)
            first_output = tts.start

        if turn_index == 0 and rng.random() < 0.6:
            final_chunks.insert(
                0,
                {
                    "defaultVariables": {
                        "customer_tier": "unknown",
                        "language": self.language,
                        "max_refund": 500,
                    }
                },
            )
        if tools and rng.random() < 0.55:
            final_chunks.append(
                {"updatedVariables": {"last_tool": tools[-1].display_name, "resolved": rng.random() < 0.6}}
            )
        final_chunks.extend(self._agent_output())
        messages.append(_message("agent", final_chunks, clock.advance(1, 40)))
        root.end = clock.advance(1, 30)
        root.attributes = {
            "perceived latency (ms)": max(0, (first_output - root.start) // NANOS_PER_MILLI),
            "input types": turn_inputs,
        }
        clamp_depth(root, self.scale.span_depth)
        turn: dict[str, Any] = {"messages": messages, "rootSpan": root.to_json()}
        if intended_text:
            turn["userIntendedText"] = intended_text
        self.context_tokens += between(rng, 60, 260)
        return turn

    def _agent_output(self) -> list[dict[str, Any]]:
        rng = self.rng
        text = rng.choice(self.catalog.agent_texts)
        chunks = [{"transcript": text}, agent_audio(rng)] if self.audio else [{"text": text}]
        if rng.random() < 0.12:
            chunks.append({"payload": chips(rng)})
        return chunks

    def _transfer_target(self, agent: Agent) -> Agent | None:
        if agent is self.catalog.root_agent and self.rng.random() < 0.12:
            return self.rng.choice(self.catalog.sub_agents)
        return None

    # ----------------------------------------------------------------------------- tools
    def _values(self, spec: tuple[tuple[str, str], ...]) -> dict[str, Any]:
        return tool_values(self.rng, self.catalog, spec)

    def _attribution(self, tool: Tool, agent: Agent, parent_id: str | None) -> dict[str, Any]:
        """The output-only fields shared by a call and its response."""
        out: dict[str, Any] = {}
        if parent_id:
            out["parentToolCallId"] = parent_id
        if agent is not self.catalog.root_agent:
            out["agentName"] = agent.display_name
        if self.header.source == "AGENT_TOOL":
            out["targetApp"] = self.catalog.app_name if tool.tool else "PROJECT"
        return out

    def _tool_call(
        self, tool: Tool, call_id: str, args: dict[str, Any], agent: Agent, parent_id: str | None
    ) -> dict[str, Any]:
        return {
            "toolCall": {
                **tool.identifier(),
                "id": call_id,
                "displayName": tool.display_name,
                "args": args,
                **self._attribution(tool, agent, parent_id),
            }
        }

    def _tool_response(self, tool: Tool, call_id: str, agent: Agent, parent_id: str | None) -> dict[str, Any]:
        rng = self.rng
        if rng.random() < 0.1:
            code, message = rng.choice(TOOL_ERRORS)
            response: dict[str, Any] = {"error": {"code": code, "message": message}}
        else:
            response = {"output": self._values(tool.output)}
        return {
            "toolResponse": {
                **tool.identifier(),
                "id": call_id,
                "displayName": tool.display_name,
                "response": response,
                **self._attribution(tool, agent, parent_id),
            }
        }

    def _tool_span(
        self, tool: Tool, call_id: str, agent: Agent, parent_id: str | None, chunks: list[dict[str, Any]]
    ) -> Span:
        """The Tool span of one call; an agent tool's span holds its sub-agent's LLM and Tool spans.

        Chunks for the sub-agent's calls, then the call's own response chunk, are appended to `chunks`.
        """
        rng, clock = self.rng, self.clock
        span = clock.open("Tool", {"name": tool.display_name, "agent": agent.display_name})
        if tool.sub_agent is not None:
            sub_agent = tool.sub_agent
            span.children.append(self._llm(sub_agent, output_tokens=(8, 60)))
            for sub_name in tool.sub_tools[: between(rng, 1, len(tool.sub_tools))]:
                sub_tool = self.catalog.tool(sub_name)
                sub_id = new_call_id(self.rng)
                chunks.append(
                    self._tool_call(sub_tool, sub_id, self._values(sub_tool.args), sub_agent, call_id)
                )
                span.children.append(self._tool_span(sub_tool, sub_id, sub_agent, call_id, chunks))
        elif rng.random() < 0.5:
            span.children.append(
                clock.leaf(
                    f"TOOL:{tool.display_name}",
                    {"http status": 200, "endpoint": tool.tool or tool.toolset},
                    40,
                    900,
                )
            )
        chunks.append(self._tool_response(tool, call_id, agent, parent_id))
        return clock.close(span, 60 * self.tool_slowdown, 400 * self.tool_slowdown)

    # ----------------------------------------------------------------------------- other spans
    def _llm(self, agent: Agent, output_tokens: tuple[int, int]) -> Span:
        rng, clock = self.rng, self.clock
        span = clock.open("LLM", {})
        clock.close(span, 250, 2_200)
        length_ms = (span.end - span.start) // NANOS_PER_MILLI
        attributes: dict[str, Any] = {
            "agent": agent.display_name,
            "model": self.model,
            "input token count": self.context_tokens + between(rng, 0, 400),
            "output token count": between(rng, *output_tokens),
            "time to first chunk (ms)": between(
                rng, length_ms // 5, max(length_ms // 5, length_ms * 7 // 10)
            ),
        }
        if self.audio:
            attributes["time to first audio (ms)"] = attributes["time to first chunk (ms)"] + between(
                rng, 20, 120
            )
            attributes["audio duration (ms)"] = between(rng, 800, 6_000)
        span.attributes = attributes
        return span

    def _guardrail(self, agent: Agent, guardrail: Guardrail) -> Span:
        return self.clock.leaf(
            "Guardrail", {"agent": agent.display_name, "name": guardrail.display_name}, 15, 140
        )

    def _callback(self, agent: Agent, callback: Callback) -> Span:
        attributes = {
            "agent": agent.display_name,
            "stage": callback.stage,
            "description": callback.description,
        }
        if self.rng.random() < 0.25:
            return self.clock.instant("Callback", attributes)
        return self.clock.leaf("Callback", attributes, 1, 35)
