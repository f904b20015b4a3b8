// A server of MCP Tasks (2025-11-25) built on the official TypeScript SDK's
// task support (@modelcontextprotocol/sdk experimental/tasks: McpServer's
// registerToolTask, InMemoryTaskStore, InMemoryTaskMessageQueue), for the
// interop tests of mcpx's tasks (testdata/script/sdktasks*.txtar). No one
// here wrote the task machinery it runs: only these tools.
//
//   node server.mjs stdio             over stdio
//   PORT=N node server.mjs streamableHttp
//                                     stateless Streamable HTTP at /mcp, one
//                                     task store for every request, so a
//                                     task outlives the connection that
//                                     created it (mcpx tasks get|result|cancel)
//
// Tools (all taskSupport "required" unless said):
//   slow      completes after STEPS polls of tasks/get (steps argument,
//             default 3), answering "done after N polls"
//   ask       asks for input (elicitation/create, through tasks/result) and
//             answers with what it got
//   fail      ends failed with an isError result
//   forever   works until it is cancelled
//   quick     taskSupport "optional": answers at once without --task too
//   ask-as-task
//             no task itself: sends elicitation/create as a task of the
//             client's (2025-11-25 tasks for elicitation), polls it with
//             tasks/get, fetches it with tasks/result, and answers with
//             the name and the messages the SDK's stream yielded
//
// The SDK is found in $MCPX_NPM_CACHE, or the repository's .cache/npm.
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createServer } from "node:http";

const here = dirname(fileURLToPath(import.meta.url));
const cache = process.env.MCPX_NPM_CACHE || join(here, "..", "..", "..", ".cache", "npm");
const sdk = join(cache, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm");
const load = (p) => import(pathToFileURL(join(sdk, p)).href);

const { McpServer } = await load("server/mcp.js");
const { StdioServerTransport } = await load("server/stdio.js");
const { StreamableHTTPServerTransport } = await load("server/streamableHttp.js");
const { InMemoryTaskStore, InMemoryTaskMessageQueue } = await load("experimental/tasks/stores/in-memory.js");
const { ElicitResultSchema } = await load("types.js");
const { z } = await import(pathToFileURL(join(cache, "node_modules", "zod", "index.js")).href);

// Polls of tasks/get left per task of slow. The SDK answers tasks/get from
// the task store, never through registerToolTask's getTask handler, so the
// store is where the polls are counted.
const polls = new Map();
class PolledStore extends InMemoryTaskStore {
  async getTask(taskId, sessionId) {
    const p = polls.get(taskId);
    if (p && --p.left <= 0) {
      polls.delete(taskId);
      await this.storeTaskResult(taskId, "completed", { content: [{ type: "text", text: `done after ${p.steps} polls` }] }, sessionId);
    }
    return super.getTask(taskId, sessionId);
  }
}
// One store for every connection: tasks are the server's, not a session's.
const taskStore = new PolledStore();
const taskMessageQueue = new InMemoryTaskMessageQueue();

function newServer() {
  const server = new McpServer(
    { name: "sdktasks", version: "1.0.0" },
    {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore,
      taskMessageQueue,
    },
  );
  const get = async (_args, { taskId, taskStore }) => taskStore.getTask(taskId);
  const result = async (_args, { taskId, taskStore }) => taskStore.getTaskResult(taskId);
  const required = { taskSupport: "required" };

  server.experimental.tasks.registerToolTask(
    "slow",
    { description: "completes after a few polls", inputSchema: { steps: z.number().int().default(3) }, execution: required },
    {
      async createTask({ steps }, { taskStore, taskRequestedTtl }) {
        const task = await taskStore.createTask({ ttl: taskRequestedTtl, pollInterval: 100 });
        polls.set(task.taskId, { left: steps, steps });
        return { task };
      },
      getTask: get,
      getTaskResult: result,
    },
  );

  server.experimental.tasks.registerToolTask(
    "ask",
    { description: "asks for a name", inputSchema: {}, execution: required },
    {
      async createTask(_args, extra) {
        const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl, pollInterval: 100 });
        (async () => {
          try {
            const answer = await extra.sendRequest(
              {
                method: "elicitation/create",
                params: {
                  mode: "form",
                  message: "Your name?",
                  requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
                },
              },
              ElicitResultSchema,
              { relatedTask: { taskId: task.taskId } },
            );
            const text = answer.action === "accept" ? `hello ${answer.content?.name}` : `no name (${answer.action})`;
            await taskStore.storeTaskResult(task.taskId, "completed", { content: [{ type: "text", text }] });
          } catch (err) {
            await taskStore
              .storeTaskResult(task.taskId, "failed", { content: [{ type: "text", text: String(err) }], isError: true })
              .catch(() => {});
          }
        })();
        return { task };
      },
      getTask: get,
      getTaskResult: result,
    },
  );

  server.experimental.tasks.registerToolTask(
    "fail",
    { description: "fails", inputSchema: {}, execution: required },
    {
      async createTask(_args, { taskStore, taskRequestedTtl }) {
        const task = await taskStore.createTask({ ttl: taskRequestedTtl, pollInterval: 100 });
        setTimeout(() => {
          taskStore
            .storeTaskResult(task.taskId, "failed", { content: [{ type: "text", text: "it broke" }], isError: true })
            .catch(() => {});
        }, 50);
        return { task };
      },
      getTask: get,
      getTaskResult: result,
    },
  );

  server.experimental.tasks.registerToolTask(
    "forever",
    { description: "works until cancelled", inputSchema: {}, execution: required },
    {
      async createTask(_args, { taskStore, taskRequestedTtl }) {
        return { task: await taskStore.createTask({ ttl: taskRequestedTtl, pollInterval: 100 }) };
      },
      getTask: get,
      getTaskResult: result,
    },
  );

  server.experimental.tasks.registerToolTask(
    "quick",
    { description: "answers at once", inputSchema: {}, execution: { taskSupport: "optional" } },
    {
      async createTask(_args, { taskStore, taskRequestedTtl }) {
        const task = await taskStore.createTask({ ttl: taskRequestedTtl, pollInterval: 100 });
        await taskStore.storeTaskResult(task.taskId, "completed", { content: [{ type: "text", text: "quick" }] });
        return { task };
      },
      getTask: get,
      getTaskResult: result,
    },
  );
  // The other way round: the SDK as the requestor of a task-augmented
  // elicitation, which the client (mcpx) runs as a task of its own.
  server.registerTool("ask-as-task", { description: "asks for a name, as a task of the client's", inputSchema: {} }, async () => {
    let answer;
    const seen = [];
    for await (const msg of server.server.experimental.tasks.elicitInputStream(
      {
        mode: "form",
        message: "Your name?",
        requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      },
      { task: { ttl: 60000 } },
    )) {
      seen.push(msg.type === "taskStatus" ? `${msg.type} ${msg.task.status}` : msg.type);
      if (msg.type === "result") answer = msg.result;
      if (msg.type === "error") throw msg.error;
    }
    const text = answer.action === "accept" ? `hello ${answer.content?.name}` : `no name (${answer.action})`;
    return { content: [{ type: "text", text }, { type: "text", text: seen.join(", ") }] };
  });
  return server;
}

const mode = process.argv[2];
if (mode === "stdio") {
  await newServer().connect(new StdioServerTransport());
} else if (mode === "streamableHttp") {
  const port = Number(process.env.PORT);
  const http = createServer(async (req, res) => {
    if (!req.url.startsWith("/mcp")) {
      res.writeHead(404).end();
      return;
    }
    // Stateless: a server and a transport per request, one task store.
    const server = newServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  http.listen(port, "127.0.0.1", () => console.error(`sdktasks listening on port ${port}`));
} else {
  console.error("usage: node server.mjs stdio|streamableHttp");
  process.exit(2);
}
