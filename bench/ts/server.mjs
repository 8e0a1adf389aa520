// The two tools of the performance suite with the official TypeScript SDK, written the way its
// README shows (McpServer.registerTool with zod shapes), over stdio.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "ts-bench", version: "1.0.0" });
server.registerTool(
  "add",
  { description: "Add two numbers.", inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
);
server.registerTool(
  "echo",
  { description: "Echo a text back.", inputSchema: { text: z.string() } },
  async ({ text }) => ({ content: [{ type: "text", text }] }),
);
await server.connect(new StdioServerTransport());
