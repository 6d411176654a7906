// What the two SDK clients share: client.mjs (the v1 SDK,
// @modelcontextprotocol/sdk) and v2client.mjs (the v2 SDK,
// @modelcontextprotocol/client) read the same arguments, connect the same
// way and answer greet's question the same way, so e2e/sdk_test.go and
// e2e/sdk_v2_test.go judge their elicitation sections with one check.
// tasks.mjs and replicas.mjs share the tasks extension's raw requests
// (rawDispatcher). It imports no SDK: each script passes its own transport
// classes.

// parseArgs reads --url URL or -- COMMAND... (exactly one of them) and the
// script's own flags: flags maps a flag to a function that stores its
// value in opts. script names the script in the errors.
export function parseArgs(argv, script, flags, opts) {
  opts.command = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      opts.command = argv.slice(i + 1);
      break;
    } else if (a === '--url') {
      opts.url = argv[++i];
    } else if (Object.hasOwn(flags, a)) {
      flags[a](opts, argv[++i]);
    } else {
      throw new Error(`unknown argument ${a}; see the usage at the top of ${script}`);
    }
  }
  if (!opts.url === !opts.command.length) {
    throw new Error('give either --url or -- COMMAND...');
  }
  return opts;
}

// errorText is how a script records an exception: {error, name}.
export function errorText(err) {
  return { error: `${err?.name ?? 'Error'}: ${err?.message ?? String(err)}`, name: err?.name };
}

// transportFor returns the transport opts ask for: streamable HTTP to
// opts.url, or stdio to opts.command (its stderr passed through).
export function transportFor(opts, { StreamableHTTPClientTransport, StdioClientTransport }) {
  return opts.url
    ? new StreamableHTTPClientTransport(new URL(opts.url))
    : new StdioClientTransport({ command: opts.command[0], args: opts.command.slice(1), stderr: 'inherit' });
}

// Answerer is the client's elicitation handler: it records each question
// and answers with whatever the current call set (handle takes the
// request's params).
export class Answerer {
  answer = null;
  asked = [];
  handle = async (params) => {
    this.asked.push({ message: params.message, requestedSchema: params.requestedSchema });
    if (!this.answer) {
      throw new Error('no answer prepared for this elicitation');
    }
    return this.answer;
  };
}

const greetAnswers = {
  accept: { action: 'accept', content: { name: 'Ada' } },
  decline: { action: 'decline' },
  cancel: { action: 'cancel' }
};

// elicitations calls greet (callGreet) once per answer, accept, decline and
// cancel, and returns each call's {result, asked} or {error, asked}.
export async function elicitations(answerer, callGreet) {
  const results = {};
  for (const [action, a] of Object.entries(greetAnswers)) {
    answerer.answer = a;
    answerer.asked.length = 0;
    try {
      results[action] = { result: await callGreet(), asked: [...answerer.asked] };
    } catch (err) {
      results[action] = { ...errorText(err), asked: [...answerer.asked] };
    }
  }
  return results;
}

// rawDispatcher returns a function that POSTs a framed 2026-07-28 request
// to url and reads its answer (the last event of an event stream, or the
// JSON body): the tasks extension's requests need it, since the SDK's
// codecs refuse resultType "task". log, when set, gets each request
// (">> ") and answer ("<< ").
export function rawDispatcher(url, log) {
  let nextID = 1;
  return async function rawDispatch(request) {
    const body = { jsonrpc: "2.0", id: `raw-${nextID++}`, ...request };
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": request.method,
    };
    const name = request.params?.taskId ?? request.params?.name;
    if (typeof name === "string") headers["mcp-name"] = name;
    log?.(">> " + JSON.stringify(body));
    const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
    let text = await res.text();
    if ((res.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
      const data = text.split("\n").filter((l) => l.startsWith("data: "));
      text = data[data.length - 1].slice("data: ".length);
    }
    log?.("<< " + text);
    return JSON.parse(text);
  };
}
