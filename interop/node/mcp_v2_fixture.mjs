// Usage: node mcp_v2_fixture.mjs MODE stdio SERVER_COMMAND [ARGS...]
//        node mcp_v2_fixture.mjs MODE http URL [library|tasks]
//
// Drives the MCP conformance fixture (`jrpc serve --mcp-fixture`) with the
// official TypeScript MCP SDK v2 client (@modelcontextprotocol/client),
// negotiating MODE: "legacy" (2025-11-25, initialize), "auto"
// (server/discover first) or a revision to pin (2026-07-28). It lists and
// calls the fixture's tools (every content type, errors, logging, progress,
// sampling, elicitation and roots answered by this client's handlers, over
// the session or as multi round-trips), lists and reads its resources and
// templates, lists and gets its prompts, asks for a completion, triggers
// the list-changed notifications, pages with a bad cursor, and connects a
// second client that declares no capabilities. Prints one JSON object:
// each step's result or error as the SDK returned it (minus the stateless
// era's _meta, resultType and caching hints), and what the handlers saw.
// The Go test (mcp_fixture_ts_test.go) checks it against the fixture's
// source. Exit status: 0 when the script ran to its end, 2 on a crash or a
// timeout.
//
// With "library" it drives instead the Go test's own server (package mcp,
// pages of 2): the lists the SDK walks page by page (and one page asked
// by its cursor), a tool's structured output (which the SDK checks against
// the tool's outputSchema), a resource link, a completion and the update
// of a resource it subscribed to.
//
// With "tasks" (2026-07-28 over HTTP) it tries the fixture's Tasks
// extension: the SDK refuses a tools/call answered with resultType "task"
// (it has no tasks API), so the script creates the tasks by plain POSTs,
// then polls, answers and cancels them with the SDK's generic request()
// (tasks/get, tasks/update, tasks/cancel, which its transport sends with
// the Mcp-Name header the extension asks for).

import { Client, ProtocolError, fromJsonSchema } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const STEP_MS = 10000;
const watchdog = setTimeout(() => {
  process.stderr.write('mcp_v2_fixture: timed out\n');
  process.exit(2);
}, 45000);

const [mode, kind, ...target] = process.argv.slice(2);
const modern = mode !== 'legacy';
const opts = { timeout: STEP_MS };

// bare drops the members every stateless-era result carries.
function bare(r) {
  if (!r || typeof r !== 'object') return r;
  const { _meta, resultType, ttlMs, cacheScope, ...rest } = r;
  return rest;
}

async function outcome(promise) {
  try {
    return { result: bare(await promise) };
  } catch (e) {
    if (e instanceof ProtocolError) return { error: { code: e.code, message: e.message, data: e.data } };
    return { error: { code: -1, message: String((e && e.message) || e) } };
  }
}

function newTransport() {
  if (kind === 'stdio') return new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: 'inherit' });
  return new StreamableHTTPClientTransport(new URL(target[0]));
}

function versionNegotiation() {
  if (mode === 'legacy' || mode === 'auto') return { mode };
  return { mode: { pin: mode } };
}

// waitFor polls until pred holds (true) or ms pass (false).
async function waitFor(pred, ms) {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    if (pred()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return pred();
}

// The answers of this client's elicitation handler, by the question's message.
const answers = {
  'What is your name?': { name: 'Ada' },
  'Step 1: What is your name?': { name: 'Ada' },
  'Step 2: What is your favorite color?': { color: 'blue' },
  'Please confirm': { confirmed: 'yes' },
  'Elicitation input': { value: 'v' },
  'What context should the prompt use?': { context: 'testing' },
  'Please review and update the form fields with defaults': { name: 'John Doe', age: 30, score: 95.5, status: 'active', verified: true },
  'Please select options from the enum fields': {
    untitledSingle: 'option2',
    titledSingle: 'value3',
    legacyEnum: 'opt1',
    untitledMulti: ['option1', 'option3'],
    titledMulti: ['value2'],
  },
};

// The answers of this client's sampling handler, by the last message's text.
const completions = { 'What is the capital of France?': 'Paris', 'Generate a greeting': 'Hello there' };

// pages records the list results the client receives, per method.
function tapPages(transport, sent) {
  const pages = {};
  const onmessage = transport.onmessage;
  transport.onmessage = (m, extra) => {
    const req = m.result && sent.find((r) => r.id === m.id);
    if (req && req.method.endsWith('/list')) {
      const items = m.result.tools ?? m.result.prompts ?? m.result.resources ?? m.result.resourceTemplates ?? [];
      (pages[req.method] ??= []).push({ cursor: req.params?.cursor ?? null, items: items.map((i) => i.name), nextCursor: m.result.nextCursor ?? null });
    }
    onmessage(m, extra);
  };
  return pages;
}

async function library() {
  const client = new Client({ name: 'interop-ts-v2-library', version: '1.0.0' }, { versionNegotiation: versionNegotiation() });
  const transport = newTransport();
  await client.connect(transport, opts);
  const sent = [];
  const send = transport.send.bind(transport);
  transport.send = (m, o) => {
    sent.push(m);
    return send(m, o);
  };
  const pages = tapPages(transport, sent);
  const out = { protocolVersion: client.getNegotiatedProtocolVersion() ?? null, steps: {} };
  const s = out.steps;
  const names = async (list, key) => {
    const r = await outcome(list);
    return r.result ? { result: r.result[key].map((i) => i.name) } : r;
  };
  s.tools = await names(client.listTools({}, opts), 'tools');
  s.resources = await names(client.listResources({}, opts), 'resources');
  s.templates = await names(client.listResourceTemplates({}, opts), 'resourceTemplates');
  s.prompts = await names(client.listPrompts({}, opts), 'prompts');
  out.pages = structuredClone(pages); // the SDK's own walks
  const second = pages['tools/list']?.[0]?.nextCursor;
  s.toolsPage2 = second ? await outcome(client.listTools({ cursor: second }, opts)) : { error: { code: -1, message: 'no nextCursor on the first page' } };
  if (s.toolsPage2.result) s.toolsPage2 = { result: { tools: s.toolsPage2.result.tools.map((t) => t.name), nextCursor: s.toolsPage2.result.nextCursor ?? null } };
  s.structured = await outcome(client.callTool({ name: 'add', arguments: { a: 2, b: 3 } }, opts));
  s.link = await outcome(client.callTool({ name: 'link', arguments: {} }, opts));
  s.complete = await outcome(client.complete({ ref: { type: 'ref/prompt', name: 'p1' }, argument: { name: 'color', value: 'g' } }, opts));
  const updated = [];
  client.setNotificationHandler('notifications/resources/updated', (n) => {
    const { _meta, ...params } = n.params;
    updated.push(params);
  });
  const sub = modern ? await client.listen({ resourceSubscriptions: ['test://r1'] }, opts) : await client.subscribeResource({ uri: 'test://r1' }, opts);
  s.touch = await outcome(client.callTool({ name: 'touch', arguments: {} }, opts));
  await waitFor(() => updated.length > 0, 5000);
  s.updated = { result: updated };
  if (modern) await sub.close();
  await client.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}

// createTask POSTs a tools/call that the server runs as a task, as a
// 2026-07-28 client declaring the extension, and returns its
// CreateTaskResult.
async function createTask(name, args) {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'interop-ts-v2-tasks', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} }, extensions: { [TASKS]: {} } },
  };
  const res = await fetch(target[0], {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': name },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args, _meta: meta } }),
  });
  const text = await res.text();
  const body = res.headers.get('content-type')?.startsWith('text/event-stream') ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6))).find((m) => m.id === 1) : JSON.parse(text);
  if (!body?.result?.taskId) throw new Error(`${name}: no task: ${text}`);
  return body.result;
}

const TASKS = 'io.modelcontextprotocol/tasks';

async function tasks() {
  const any = fromJsonSchema({ type: 'object' });
  const client = new Client({ name: 'interop-ts-v2-tasks', version: '1.0.0' }, { capabilities: { elicitation: { form: {} }, extensions: { [TASKS]: {} } }, versionNegotiation: versionNegotiation() });
  // The headers of the SDK's tasks/* POSTs.
  const headers = [];
  const recording = (url, init) => {
    const h = new Headers(init?.headers);
    if (h.get('mcp-method')?.startsWith('tasks/')) headers.push({ method: h.get('mcp-method'), name: h.get('mcp-name') });
    return fetch(url, init);
  };
  const transport = new StreamableHTTPClientTransport(new URL(target[0]), { fetch: recording });
  await client.connect(transport, opts);
  const out = { protocolVersion: client.getNegotiatedProtocolVersion() ?? null, steps: {}, taskHeaders: headers };
  const s = out.steps;
  const req = (method, params) => outcome(client.request({ method, params }, any, opts));
  const view = (o) => {
    if (!o.result) return o;
    const { createdAt, lastUpdatedAt, ttlMs, pollIntervalMs, taskId, ...rest } = o.result;
    return { result: rest };
  };
  // get polls tasks/get until the task's status is not status.
  const get = async (id, status) => {
    let o;
    for (const end = Date.now() + 5000; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
      o = await req('tasks/get', { taskId: id });
      if (!o.result || o.result.status !== status) break;
    }
    return view(o);
  };
  s.extension = { result: client.getServerCapabilities()?.extensions?.[TASKS] ?? null };
  s.sdkCall = await outcome(client.callTool({ name: 'greet', arguments: { name: 'Ada' } }, opts)); // never a task
  s.sdkTaskCall = await outcome(client.callTool({ name: 'slow_compute', arguments: { seconds: 0.05 } }, opts));
  const confirm = await createTask('confirm_delete', { filename: 'a.txt' });
  s.created = { result: { resultType: confirm.resultType, status: confirm.status } };
  s.waiting = await get(confirm.taskId, 'working');
  s.update = await req('tasks/update', { taskId: confirm.taskId, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } });
  s.done = await get(confirm.taskId, 'input_required');
  if (s.done.result?.status === 'working') s.done = await get(confirm.taskId, 'working');
  const slow = await createTask('slow_compute', { seconds: 30 });
  s.cancel = view(await req('tasks/cancel', { taskId: slow.taskId }));
  s.cancelled = await get(slow.taskId, 'working');
  s.unknown = await req('tasks/get', { taskId: 'no-such-task' });
  await client.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}

async function main() {
  if (target[1] === 'library') return library();
  if (target[1] === 'tasks') return tasks();
  const seen = { elicitations: [], samplings: [], roots: 0, logs: [], toolsChanged: [], promptsChanged: [] };
  const client = new Client(
    { name: 'interop-ts-v2-fixture', version: '1.0.0' },
    {
      capabilities: { elicitation: { form: {} }, sampling: {}, roots: { listChanged: false } },
      versionNegotiation: versionNegotiation(),
      listChanged: {
        tools: { debounceMs: 0, onChanged: (err, tools) => seen.toolsChanged.push(err ? 'error: ' + err.message : tools.map((t) => t.name)) },
        prompts: { debounceMs: 0, onChanged: (err, prompts) => seen.promptsChanged.push(err ? 'error: ' + err.message : prompts.map((p) => p.name)) },
      },
    },
  );
  client.setRequestHandler('elicitation/create', async (req) => {
    const { message, requestedSchema } = req.params;
    seen.elicitations.push({ message, requestedSchema });
    if (message === 'Decline me') return { action: 'decline' };
    return { action: 'accept', content: answers[message] ?? { response: 'yes' } };
  });
  client.setRequestHandler('sampling/createMessage', async (req) => {
    seen.samplings.push(req.params);
    const text = req.params.messages.at(-1)?.content?.text ?? '';
    return { model: 'interop-model', role: 'assistant', content: { type: 'text', text: completions[text] ?? 'echo: ' + text } };
  });
  client.setRequestHandler('roots/list', async () => {
    seen.roots++;
    return { roots: [{ uri: 'file:///tmp/interop-root', name: 'interop' }] };
  });
  client.setNotificationHandler('notifications/message', (n) => {
    seen.logs.push(n.params);
  });
  const transport = newTransport();
  await client.connect(transport, opts);
  // Every request the client sends, as the transport carries it.
  const sent = [];
  const send = transport.send.bind(transport);
  transport.send = (m, o) => {
    sent.push(m);
    return send(m, o);
  };

  const out = { protocolVersion: client.getNegotiatedProtocolVersion() ?? null, steps: {}, seen };
  const s = out.steps;
  const call = (name, args = {}, o = {}) => outcome(client.callTool({ name, arguments: args }, { ...opts, ...o }));

  if (!modern) s.ping = await outcome(client.ping(opts)); // not a 2026-07-28 method for the SDK
  const tools = await outcome(client.listTools({}, opts));
  s.toolNames = tools.result ? { result: tools.result.tools.map((t) => t.name) } : tools;
  s.schema2020 = tools.result ? { result: tools.result.tools.find((t) => t.name === 'json_schema_2020_12_tool')?.inputSchema } : tools;
  s.samplingSchema = tools.result ? { result: tools.result.tools.find((t) => t.name === 'test_sampling')?.inputSchema } : tools;
  for (const name of ['test_simple_text', 'test_image_content', 'test_audio_content', 'test_embedded_resource', 'test_multiple_content_types',
    'test_error_handling', 'test_reconnection', 'test_streaming_elicitation']) {
    s[name] = await call(name);
  }
  s.json_schema_2020_12_tool = await call('json_schema_2020_12_tool', { name: 'Ada', address: { city: 'Paris' } });
  s.unknownTool = await call('no_such_tool');
  s.greet = await call('greet', { name: 'Ada' });
  s.slow_compute = await call('slow_compute', { seconds: 0.05 });
  s.test_custom_headers = await call('test_custom_headers', { region: 'eu-west-1' });

  // Logging: under 2025-11-25 every message until logging/setLevel says
  // otherwise; under 2026-07-28 what the request's _meta logLevel asks for.
  const logMeta = (level) => (modern ? { _meta: { 'io.modelcontextprotocol/logLevel': level } } : {});
  s.logging = await outcome(client.callTool({ name: 'test_tool_with_logging', arguments: {}, ...logMeta('info') }, opts));
  out.logsAtInfo = seen.logs.splice(0);
  if (!modern) s.setLevel = await outcome(client.setLoggingLevel('error', opts));
  s.loggingQuiet = await outcome(client.callTool({ name: 'test_tool_with_logging', arguments: {}, ...logMeta('error') }, opts));
  out.logsAtError = seen.logs.splice(0);
  if (modern) {
    s.loggingNoLevel = await call('test_tool_with_logging');
    out.logsNoLevel = seen.logs.splice(0);
  }

  const progress = [];
  s.progress = await call('test_tool_with_progress', {}, { onprogress: (p) => progress.push(p) });
  out.progress = progress;
  out.progressToken = sent.find((m) => m.method === 'tools/call' && m.params?.name === 'test_tool_with_progress')?.params?._meta?.progressToken ?? null;

  s.sampling = await call('test_sampling', { prompt: 'Say hi' });
  s.elicitation = await call('test_elicitation', { message: 'Proceed?' });
  s.elicitationDecline = await call('test_elicitation', { message: 'Decline me' });
  s.sep1034 = await call('test_elicitation_sep1034_defaults');
  s.sep1330 = await call('test_elicitation_sep1330_enums');
  for (const name of ['elicitation', 'sampling', 'list_roots', 'request_state', 'multi_round', 'multiple_inputs', 'capabilities']) {
    s['ir_' + name] = await call('test_input_required_result_' + name);
  }

  const resources = await outcome(client.listResources({}, opts));
  s.resources = resources.result ? { result: resources.result.resources } : resources;
  const templates = await outcome(client.listResourceTemplates({}, opts));
  s.templates = templates.result ? { result: templates.result.resourceTemplates } : templates;
  for (const [name, uri] of Object.entries({ readText: 'test://static-text', readBinary: 'test://static-binary', readTemplate: 'test://template/42/data',
    readStateless: 'test://stateless-static-text', readMissing: 'test://no-such-resource' })) {
    s[name] = await outcome(client.readResource({ uri }, { ...opts, cacheMode: 'bypass' }));
  }
  // Caching hints: under 2026-07-28 the server's ttlMs lets the SDK serve
  // the second read from its cache; under 2025-11-25 there is none.
  for (let i = 0; i < 2; i++) await client.readResource({ uri: 'test://watched-resource' }, opts);
  out.watchedReads = sent.filter((m) => m.method === 'resources/read' && m.params?.uri === 'test://watched-resource').length;
  if (modern) {
    const sub = await client.listen({ resourceSubscriptions: ['test://watched-resource'] }, opts);
    s.subscribe = { result: sub.honoredFilter };
    await sub.close();
  } else {
    s.subscribe = await outcome(client.subscribeResource({ uri: 'test://watched-resource' }, opts));
    s.unsubscribe = await outcome(client.unsubscribeResource({ uri: 'test://watched-resource' }, opts));
  }

  const prompts = await outcome(client.listPrompts({}, opts));
  s.promptNames = prompts.result ? { result: prompts.result.prompts.map((p) => p.name) } : prompts;
  s.promptWithArguments = prompts.result ? { result: prompts.result.prompts.find((p) => p.name === 'test_prompt_with_arguments') } : prompts;
  s.simplePrompt = await outcome(client.getPrompt({ name: 'test_simple_prompt' }, opts));
  s.argumentsPrompt = await outcome(client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'one', arg2: 'two' } }, opts));
  s.missingArgument = await outcome(client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'one' } }, opts));
  s.resourcePrompt = await outcome(client.getPrompt({ name: 'test_prompt_with_embedded_resource', arguments: { resourceUri: 'test://static-text' } }, opts));
  s.imagePrompt = await outcome(client.getPrompt({ name: 'test_prompt_with_image' }, opts));
  s.inputPrompt = await outcome(client.getPrompt({ name: 'test_input_required_result_prompt' }, opts));
  s.unknownPrompt = await outcome(client.getPrompt({ name: 'no_such_prompt' }, opts));
  s.complete = await outcome(client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'o' } }, opts));
  s.badCursor = await outcome(client.listTools({ cursor: 'not-a-cursor' }, opts));

  // List changes: the SDK refreshes the list when told (over the session,
  // or on the subscriptions/listen stream it opened at connect).
  s.triggerTools = await call('test_trigger_tool_change');
  await waitFor(() => seen.toolsChanged.some((l) => Array.isArray(l) && l.includes('test_dynamic_tool')), 5000);
  s.dynamicTool = await call('test_dynamic_tool');
  s.triggerPrompts = await call('test_trigger_prompt_change');
  await waitFor(() => seen.promptsChanged.some((l) => Array.isArray(l) && l.includes('test_dynamic_prompt')), 5000);
  s.dynamicPrompt = await outcome(client.getPrompt({ name: 'test_dynamic_prompt' }, opts));
  await client.close();

  // A client that declares no capabilities is never asked.
  const bareClient = new Client({ name: 'interop-ts-v2-bare', version: '1.0.0' }, { versionNegotiation: versionNegotiation() });
  await bareClient.connect(newTransport(), opts);
  s.bareElicitation = await outcome(bareClient.callTool({ name: 'test_elicitation', arguments: { message: 'Proceed?' } }, opts));
  s.bareMissingCapability = await outcome(bareClient.callTool({ name: 'test_missing_capability', arguments: {} }, opts));
  s.bareCapabilities = await outcome(bareClient.callTool({ name: 'test_input_required_result_capabilities', arguments: {} }, opts));
  await bareClient.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().then(
  () => {
    clearTimeout(watchdog);
    process.exit(0);
  },
  (e) => {
    process.stderr.write('mcp_v2_fixture: ' + ((e && e.stack) || e) + '\n');
    process.exit(2);
  },
);
