// The TypeScript SDK's Tasks client (@modelcontextprotocol/ext-tasks over
// @modelcontextprotocol/client, the io.modelcontextprotocol/tasks
// extension on 2026-07-28) on replica B, about two tasks another client
// made on replica A: node replicas.mjs URL_B ASK_ID CANCEL_ID.
// ASK_ID's run waits for an answer: the script reads its question
// (input_required, inputRequests), answers it (tasks/update) and waits for
// its result. CANCEL_ID's run is held in a step: the script reads it
// (working) and cancels it (tasks/cancel), then reads it until it ends.
// It prints one JSON line per case, {case, ...facts};
// e2e/replicas_sdk_test.go judges them. Any exception exits 1 with the
// error on stderr.

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";
import { rawDispatcher } from "./common.mjs";

const [url, askID, cancelID] = process.argv.slice(2);
if (!cancelID) throw new Error("usage: node replicas.mjs URL_B ASK_ID CANCEL_ID");
const clientInfo = { name: "vmcp-replicas-test", version: "1.0.0" };
const capabilities = { elicitation: { form: {} } };

const client = new Client(clientInfo, { capabilities, versionNegotiation: { mode: { pin: "2026-07-28" } } });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

// The tasks extension's requests go as framed POSTs (common.mjs).
const rawDispatch = rawDispatcher(url);

const session = createTaskSessionFromClient(client, {
  endpointId: "vmcp-e2e-replica-b",
  rawDispatch,
  v2RequestFraming: {
    protocolVersion: "2026-07-28",
    clientInfo,
    clientCapabilities: { ...capabilities, extensions: { "io.modelcontextprotocol/tasks": {} } },
  },
});

function say(fact) {
  process.stdout.write(JSON.stringify(fact) + "\n");
}

// waitStatus reads task until its status is one of want (30 s at most).
async function waitStatus(task, want) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const view = await task.snapshot();
    if (want.includes(view.status)) return view;
    if (Date.now() > deadline) throw new Error(`task ${task.taskId} is ${view.status} after 30s; want ${want}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

try {
  {
    const task = session.task(askID);
    const view = await waitStatus(task, ["input_required"]);
    const requests = view.raw.inputRequests ?? {};
    const keys = Object.keys(requests);
    say({ case: "read", status: view.status, questions: keys.map((k) => requests[k]?.params?.message ?? null) });
    const responses = {};
    for (const k of keys) responses[k] = { action: "accept", content: { region: "eu-west-1" } };
    await task.updateJson(responses);
    const outcome = await task.result();
    say({ case: "answered", status: outcome.status, structured: outcome.result?.structuredContent ?? null });
  }
  {
    const task = session.task(cancelID);
    const before = await task.snapshot();
    await task.cancel();
    const after = await waitStatus(task, ["cancelled", "completed", "failed"]);
    say({ case: "cancelled", before: before.status, status: after.status });
  }
} finally {
  await session.close();
  await client.close();
}
