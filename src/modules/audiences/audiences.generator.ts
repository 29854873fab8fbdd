import { createHash } from 'node:crypto';
import type { LlmUsage } from '../../llm/errors.js';
import type { TenantTokens } from '../../llm/token-budget.js';

/**
 * Generation of an audience version: the pluggable part. The worker gathers the inputs
 * (audiences.generation-input.ts), calls `generate`, and stores what it returns as the version's
 * artifact. The built-in writer is deterministic (the same input gives the same bytes); the model
 * writer is not, and reports its cost in `usage`. Failure is a thrown error; an `LlmError` says
 * whether it is a failed attempt, a wait (`retryAfterMs`) or final (llm/errors.ts).
 */
export interface VersionGenerator {
  readonly name: string;
  /** The longest one `generate` may take (the worker's lease must outlast it). */
  readonly maxRunMs?: number;
  generate(input: GenerationInput, options?: GenerateOptions): Promise<GeneratedArtifact>;
}

interface GenerateOptions {
  signal?: AbortSignal;
  /** The tenant's daily token allowance: a generator that calls a provider passes it with every call. */
  budget?: TenantTokens;
}

export interface GenerationAction {
  actionId: string;
  purpose: string;
  buttonTitle: string;
  actionType: string;
  url: string;
}

interface GenerationScript {
  name: string;
  /** JavaScript, run on the page as the tenant wrote it. */
  content: string;
}

export interface GenerationInput {
  version: { versionId: string; versionNumber: number; isNewPageAgent: boolean; supplementaryContext: string | null };
  page: {
    pageId: string;
    name: string;
    title: string;
    pageContext: string;
    pageType: string;
    brandId: string;
    headerActionId: string | null;
    actions: GenerationAction[];
    actionCardWidgets: unknown[];
    footerLinks: unknown[];
    /** The page's enabled scripts, in order (disabled ones never reach a version). */
    scripts: GenerationScript[];
  };
  audience: {
    audienceId: string;
    effectiveName: string;
    personId: string | null;
    personRouteKey: string | null;
    actionFormIdOverride: string | null;
    actionFormInstructionsOverride: string | null;
    actionUrlOverride: string | null;
  };
  /** The person the audience addresses and their account, when known. Never the full email. */
  person: {
    personId: string;
    name: string | null;
    /** The domain of the person's email address (`globex.example`), not the address. */
    emailDomain: string | null;
    accountDomain: string | null;
    /** The name of the person's account (company), when the account exists and has one. */
    accountName: string | null;
  } | null;
  /** The person's most recent log entries, newest first (within the input budget). */
  activity: GenerationActivity[];
  /** The tenant's topics and their entries, the default topic first (within the input budget). */
  knowledge: GenerationTopic[];
  effectiveMetadata: Record<string, unknown>;
}

export interface GenerationActivity {
  type: string;
  source: string;
  createdAt: string;
  /** The beginning of the entry's payload as JSON, emails masked; null for entries a visitor wrote. */
  excerpt: string | null;
}

export interface GenerationTopic {
  title: string;
  isDefault: boolean;
  entries: { type: string; content: string }[];
}

export interface GeneratedArtifact {
  /** The media type of `content`. */
  contentType: string;
  content: Record<string, unknown>;
  /** What the provider calls that made it cost (model writers); stored beside the artifact, not in it. */
  usage?: LlmUsage;
}

/** What the worker stores: the artifact plus who made it and a digest of its content. */
export interface StoredArtifact extends GeneratedArtifact {
  generator: string;
  sha256: string;
}

export function storedArtifact(generator: string, artifact: GeneratedArtifact): StoredArtifact {
  const sha256 = createHash('sha256').update(JSON.stringify(artifact.content)).digest('hex');
  return { generator, contentType: artifact.contentType, content: artifact.content, sha256 };
}
