/**
 * Resources and prompts: what a module offers MCP clients besides tools. Like a tool, each is an
 * injectable class with a decorator the MCP door discovers at boot; it gets only what the client
 * sent and returns content, never touching the request, the database or another account's data.
 */
import { applyDecorators, Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { AskingContext } from './context';

/** One resource's content: text, or binary as base64 `blob`. */
export type ResourceContents = ({ uri: string; mimeType?: string; text: string } | { uri: string; mimeType?: string; blob: string }) & { _meta?: Record<string, unknown> };

/** What a prompt message holds. */
export type PromptContent =
  | { type: 'text'; text: string }
  | { type: 'image' | 'audio'; data: string; mimeType: string }
  | { type: 'resource'; resource: ResourceContents };

export interface PromptMessage {
  role: 'user' | 'assistant';
  content: PromptContent;
}

/** A resource at a fixed `uri`, or a family of them matching `uriTemplate` (RFC 6570 level 1: `{name}` segments). */
export interface ResourceDefinition {
  uri?: string;
  uriTemplate?: string;
  /** Programmatic name (the list's `name`). */
  name: string;
  title?: string;
  description: string;
  mimeType?: string;
  /** Values completion/complete offers for a template variable, by variable name. */
  completions?: Record<string, readonly string[]>;
}

export interface ResourceHandler {
  /** The contents at `uri`; `variables` are the template's values (empty for a fixed uri). */
  read(uri: string, variables: Readonly<Record<string, string>>): Promise<ResourceContents[]>;
}

export interface PromptArgumentDefinition {
  name: string;
  description: string;
  required?: boolean;
  /** Values completion/complete offers for this argument. */
  completions?: readonly string[];
}

export interface PromptDefinition {
  name: string;
  title?: string;
  description: string;
  arguments?: readonly PromptArgumentDefinition[];
}

export interface PromptHandler {
  /**
   * The messages for these arguments (every required one is present, each a string of at most
   * 4 KiB). `ctx` asks the caller mid-way (`ctx.requestInput`, as a tool does): ask only what the
   * messages need and check `ctx.canAsk` first, since 2025 clients and clients without the
   * capability cannot answer.
   */
  get(args: Readonly<Record<string, string>>, ctx: AskingContext): Promise<PromptMessage[]>;
}

export const ResourceMetadata = DiscoveryService.createDecorator<ResourceDefinition>();
export const PromptMetadata = DiscoveryService.createDecorator<PromptDefinition>();

/** Declares a resource (or resource template): an injectable provider implementing ResourceHandler. */
export function Resource(definition: ResourceDefinition): ClassDecorator {
  return applyDecorators(Injectable(), ResourceMetadata(definition));
}

/** Declares a prompt: an injectable provider implementing PromptHandler. */
export function Prompt(definition: PromptDefinition): ClassDecorator {
  return applyDecorators(Injectable(), PromptMetadata(definition));
}
