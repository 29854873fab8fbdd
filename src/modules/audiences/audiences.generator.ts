import { createHash } from 'node:crypto';

/**
 * Generation of an audience version: the pluggable part. The worker gathers the inputs, calls
 * `generate`, and stores what it returns as the version's artifact. A generator must be a pure
 * function of its input (the built-in one is deterministic: the same input gives the same bytes),
 * may be slow, and reports failure by throwing.
 */
export interface VersionGenerator {
  readonly name: string;
  generate(input: GenerationInput): Promise<GeneratedArtifact>;
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
  /** The person the audience addresses and their account, when known. */
  person: {
    personId: string;
    name: string | null;
    email: string | null;
    accountDomain: string | null;
    /** The name of the person's account (company), when the account exists and has one. */
    accountName: string | null;
  } | null;
  effectiveMetadata: Record<string, unknown>;
}

export interface GeneratedArtifact {
  /** The media type of `content`. */
  contentType: string;
  content: Record<string, unknown>;
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
