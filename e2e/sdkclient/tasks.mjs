// Drives vmcp's MCP Tasks with the reference Tasks client,
// @modelcontextprotocol/ext-tasks over the SDK's @modelcontextprotocol/client:
// node tasks.mjs URL ERA, ERA "legacy" (MCP 2025-11-25 tasks) or "modern"
// (the io.modelcontextprotocol/tasks extension on 2026-07-28). For each
// case it prints one JSON line {case, ...facts}; e2e/tasks_test.go checks
// them. Any exception exits 1 with the error on stderr.

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createApplicationInputHandler,
  createTaskSessionFromClient,
} from "@modelcontextprotocol/ext-tasks/client";
import { rawDispatcher } from "./common.mjs";

const [url, era] = process.argv.slice(2);
const clientInfo = { name: "vmcp-ext-tasks-test", version: "1.0.0" };
const capabilities = { elicitation: { form: {} } };

const client = new Client(clientInfo, {
  capabilities,
  versionNegotiation: { mode: era === "legacy" ? "legacy" : { pin: "2026-07-28" } },
});
const debug = process.env.TASKS_DEBUG
  ? async (input, init) => {
      process.stderr.write(`>> ${init?.method} ${init?.body ?? ""}\n`);
      const res = await fetch(input, init);
      process.stderr.write(`<< ${res.status} ${res.headers.get("content-type")}\n`);
      return res;
    }
  : undefined;
const transport = new StreamableHTTPClientTransport(new URL(url), debug ? { fetch: debug } : {});
await client.connect(transport);
if (debug) process.stderr.write(`era ${client.getProtocolEra()}\n`);

// The tasks extension's requests go as framed POSTs (common.mjs).
const rawDispatch = rawDispatcher(url, process.env.TASKS_DEBUG ? (line) => process.stderr.write(line + "\n") : undefined);

const asked = [];
const session = createTaskSessionFromClient(client, {
  endpointId: "vmcp-e2e",
  ...(era === "modern"
    ? {
        rawDispatch,
        v2RequestFraming: {
          protocolVersion: "2026-07-28",
          clientInfo,
          clientCapabilities: { ...capabilities, extensions: { "io.modelcontextprotocol/tasks": {} } },
        },
      }
    : {}),
  onInputRequest: createApplicationInputHandler({
    elicitation: (request, context) => {
      asked.push({ message: request.params.message, taskId: context.taskId ?? null, delivery: context.delivery });
      return { action: "accept", content: { name: "Grace" } };
    },
    sampling: () => {
      throw new Error("vmcp never samples");
    },
    roots: () => ({ roots: [] }),
  }),
});

function say(fact) {
  process.stdout.write(JSON.stringify(fact) + "\n");
}

async function settle(name, args) {
  const execution = await session.callTool(name, args, { task: { preference: "require" } });
  const { outcome, lastTask } = await execution.settle();
  return { kind: execution.kind, taskId: execution.handle?.taskId ?? null, outcome, lastTask };
}

try {
  {
    const r = await settle("two_steps", { text: "sdk" });
    say({
      case: "completed",
      kind: r.kind,
      taskId: r.taskId,
      status: r.outcome.status,
      structured: r.outcome.result?.structuredContent ?? null,
      runId: r.outcome.result?._meta?.["vmcp/runId"] ?? null,
    });
  }
  {
    const r = await settle("ask_name", {});
    say({
      case: "input",
      taskId: r.taskId,
      status: r.outcome.status,
      structured: r.outcome.result?.structuredContent ?? null,
      asked,
    });
  }
  {
    const r = await settle("broken", {});
    say({
      case: "failed",
      status: r.outcome.status,
      isError: r.outcome.result?.isError ?? null,
      error: r.outcome.error?.message ?? null,
      statusMessage: r.lastTask?.statusMessage ?? null,
    });
  }
  {
    const execution = await session.callTool("long_nap", { label: `sdk-${era}` }, { task: { preference: "require" } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await execution.cancel();
    const { outcome } = await execution.settle();
    say({ case: "cancelled", status: outcome.status });
  }
} finally {
  await session.close();
  await client.close();
}
