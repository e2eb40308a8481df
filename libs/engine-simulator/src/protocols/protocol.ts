import type { IncomingHttpHeaders } from 'node:http';
import type { Answers } from '../answers';
import type { Question } from '../deterministic';
import { InvalidRequest } from '../invalid-request';

/** What the simulator answers with: distributions, or the non-JSON text of a `malformed` step. */
export type Reply = { model: string; answers: Answers } | { model: string; text: string };

/** A provider request understood well enough to answer. */
export interface ProviderRequest {
  /** The model name as requested (alias or dated version). */
  model: string;
  questions: Question[];
  /** Asked for free text rather than distributions: answered with a text reply. */
  freeText: boolean;
  /** Text of the user turns: what the answers are derived from. */
  seed: string;
  /** The provider's 200 body around `reply`. */
  respond(reply: Reply): object;
}

/** One provider wire protocol: where it is served, how it authenticates, reads requests and writes errors. */
export interface Protocol {
  path: string;
  /** The API key the caller presented in this protocol's header. */
  presentedKey(headers: IncomingHttpHeaders): string | undefined;
  /** Throws InvalidRequest when a real provider would refuse the request or the simulator cannot answer it. */
  parse(body: unknown, headers: IncomingHttpHeaders): ProviderRequest;
  /** The provider's error body for `status`; `message` replaces the provider's usual wording. */
  errorBody(status: number, message?: string): object;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Text of a message content: a plain string or an array of parts, of which only text parts count. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part): part is { type: 'text'; text: string } => isRecord(part) && part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text)
    .join('');
}

/** The chat turns both protocols share: `{role, content}` objects, at least one. */
export function readMessages(body: Record<string, unknown>): { role: unknown; text: string }[] {
  const { messages } = body;
  if (!Array.isArray(messages) || messages.length === 0) throw new InvalidRequest('messages must be a non-empty array');
  return messages.map((message, i) => {
    if (!isRecord(message)) throw new InvalidRequest(`messages[${i}] must be an object`);
    return { role: message.role, text: contentText(message.content) };
  });
}

export function readModel(body: Record<string, unknown>): string {
  if (typeof body.model !== 'string' || body.model === '') throw new InvalidRequest('model must be a non-empty string');
  return body.model;
}

/**
 * The questions of an answer schema: one object property per question key, whose own
 * properties name the outcomes. Anything else cannot be answered with distributions.
 */
export function questionsFromSchema(schema: unknown, where: string): Question[] {
  if (!isRecord(schema) || !isRecord(schema.properties) || Object.keys(schema.properties).length === 0) {
    throw new InvalidRequest(`${where} must be an object schema with one property per question`);
  }
  return Object.entries(schema.properties).map(([key, property]) => {
    if (!isRecord(property) || !isRecord(property.properties) || Object.keys(property.properties).length === 0) {
      throw new InvalidRequest(`${where}.properties.${key} must be an object schema with one number property per outcome`);
    }
    return { key, outcomes: Object.keys(property.properties) };
  });
}
