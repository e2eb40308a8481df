import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, CallToolResult, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { errorBody, ServiceError } from '@ds/contracts';
import { ToolBackend, toolArguments, TOOL_LIST, TOOLS } from './tools';

export const SERVER_INFO = { name: 'decision-service', title: 'Decision Service', version: '1.0.0' };

const INSTRUCTIONS =
  "Decisions of this workspace answer typed questions about a state and pick an action. Read a decision's contract with get_decision, " +
  'check a state with check_state, then run it with run_decision (billed). Errors come back as tool results with isError and { error: { code, message, details } }.';

/** What one request's tool calls run with. */
export interface ToolCallContext {
  backend: ToolBackend;
  requestId: string;
  /** How a failure that is not the API's own error is turned into one (and logged); the HTTP routes use the same. */
  mapError: (error: unknown) => ServiceError;
  /** Told of every call: the tool (`unknown` for a name that is none) and `ok` or the error code. */
  observe?: (tool: string, outcome: string) => void;
}

/**
 * One MCP server for one HTTP request: stateless, so it holds nothing but the caller's backend. The low-level
 * SDK server is used (rather than McpServer) because the spec fixes the shape of tool errors: an unknown tool
 * and invalid arguments are tool results carrying the API's error object, not protocol errors or free text.
 */
export function mcpServer(context: ToolCallContext): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOL_LIST }));
  server.setRequestHandler(CallToolRequestSchema, (request) => callTool(request.params.name, request.params.arguments, context));
  return server;
}

export async function callTool(name: string, args: unknown, context: ToolCallContext): Promise<CallToolResult> {
  const tool = TOOLS.get(name);
  try {
    if (!tool) throw new ServiceError('NOT_FOUND', `No tool ${name}; tools/list names every tool.`);
    if (tool.countsAsRun) await context.backend.countRun();
    const output = await tool.call(toolArguments(tool, args), context.backend);
    context.observe?.(tool.name, 'ok');
    return { content: [{ type: 'text', text: output.text ?? JSON.stringify(output.json) }], structuredContent: output.json };
  } catch (error) {
    const wire = context.mapError(error).toWire();
    context.observe?.(tool?.name ?? 'unknown', wire.code);
    const body = errorBody(wire, context.requestId);
    return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, isError: true };
  }
}
