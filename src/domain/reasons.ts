/**
 * The reason catalogue: every stable reason code cairn reports, with its meaning and retry class.
 * Reason codes are API (users grep for them, reports and JSON output carry them); renaming one is
 * a breaking change. `docs/reasons.md` is generated from this list (`deno task reasons`) and CI
 * checks that it is current.
 *
 * Retry classes:
 * - `never`: terminal for this input; a human must change the plan, the trust root or the cluster.
 * - `backoff`: transient; the same read may be tried again later. Never permission to repeat a mutation.
 * - `wait`: a gate is closed or evidence is still arriving; progress resumes when it opens.
 */
export type RetryClass = "never" | "backoff" | "wait";

/** One catalogue entry. */
export interface ReasonInfo {
  readonly code: string;
  readonly area: string;
  readonly retry: RetryClass;
  readonly meaning: string;
}

/** Every reason code, grouped by area. Append within the area's block; never rename. */
export const REASONS = [
  // --- usage and internal -------------------------------------------------------------------
  {
    code: "UsageInvalid",
    area: "cli",
    retry: "never",
    meaning: "The command line is malformed (unknown command or flag, missing argument).",
  },
  {
    code: "Internal",
    area: "cli",
    retry: "never",
    meaning: "A broken invariant inside cairn; a bug to report, never retried automatically.",
  },
  {
    code: "FileUnreadable",
    area: "cli",
    retry: "never",
    meaning: "A file named on the command line or in configuration cannot be read.",
  },
  {
    code: "ConfigInvalid",
    area: "cli",
    retry: "never",
    meaning: "A configuration file or flag value is invalid.",
  },

  // --- plan files: syntax and schema --------------------------------------------------------
  {
    code: "PlanSyntaxInvalid",
    area: "plan",
    retry: "never",
    meaning: "The plan file is not well-formed YAML.",
  },
  {
    code: "PlanSchemaInvalid",
    area: "plan",
    retry: "never",
    meaning: "A plan field has the wrong type, is missing, or has a value outside its allowed set.",
  },
  {
    code: "UnknownField",
    area: "plan",
    retry: "never",
    meaning:
      "The plan contains a field cairn does not know; unknown fields are refused, never ignored.",
  },
  {
    code: "DuplicateKey",
    area: "plan",
    retry: "never",
    meaning: "A mapping in the plan file repeats a key.",
  },
  {
    code: "AliasBudgetExceeded",
    area: "plan",
    retry: "never",
    meaning: "YAML aliases in the plan would expand beyond the allowed budget (alias bomb).",
  },
  {
    code: "MultipleDocuments",
    area: "plan",
    retry: "never",
    meaning: "The plan file holds more than one YAML document.",
  },
  {
    code: "PlanTooLarge",
    area: "plan",
    retry: "never",
    meaning: "The plan file exceeds the size limit.",
  },
  {
    code: "PlanEncodingInvalid",
    area: "plan",
    retry: "never",
    meaning: "The plan file is not valid UTF-8 text or contains control characters.",
  },

  // --- plan files: semantics ----------------------------------------------------------------
  {
    code: "VersionInvalid",
    area: "plan",
    retry: "never",
    meaning: "A version string is not a valid semantic version.",
  },
  {
    code: "VersionDowngrade",
    area: "plan",
    retry: "never",
    meaning: "A hop's target version is lower than its source version.",
  },
  {
    code: "VersionUnchanged",
    area: "plan",
    retry: "never",
    meaning: "A hop's target version equals its source version.",
  },
  {
    code: "SkippedMinor",
    area: "plan",
    retry: "never",
    meaning: "A hop skips a minor version; minors must be taken one at a time.",
  },
  {
    code: "MissingIntermediatePatch",
    area: "plan",
    retry: "never",
    meaning:
      "A minor hop starts from a patch that is not the latest patch of its minor in the catalogue.",
  },
  {
    code: "HopChainBroken",
    area: "plan",
    retry: "never",
    meaning: "A hop does not start where the previous hop ended.",
  },
  {
    code: "CatalogueMissing",
    area: "plan",
    retry: "wait",
    meaning:
      "The release catalogue snapshot the plan needs is missing or unreadable; the plan is held.",
  },
  {
    code: "CatalogueStale",
    area: "plan",
    retry: "wait",
    meaning: "The release catalogue snapshot is older than the allowed age; the plan is held.",
  },
  {
    code: "CatalogueDigestMismatch",
    area: "plan",
    retry: "never",
    meaning:
      "The catalogue snapshot differs from the digest the plan binds; it changed after the plan was written.",
  },
  {
    code: "CatalogueUnknownVersion",
    area: "plan",
    retry: "never",
    meaning: "A version named by the plan is not in the release catalogue snapshot.",
  },
  {
    code: "KubernetesUnsupported",
    area: "plan",
    retry: "never",
    meaning: "The Kubernetes version is outside the Talos support matrix for a hop.",
  },
  {
    code: "KubeletOutsideWindow",
    area: "plan",
    retry: "never",
    meaning: "The kubelet version is outside the target Talos version's support window.",
  },
  {
    code: "PlanExpired",
    area: "plan",
    retry: "never",
    meaning: "The plan's expiry time has passed.",
  },
  {
    code: "DeadlinesInconsistent",
    area: "plan",
    retry: "never",
    meaning:
      "A transport deadline exceeds its verification deadline, or a deadline is not positive.",
  },
  {
    code: "NodeListInvalid",
    area: "plan",
    retry: "never",
    meaning:
      "The node list repeats a node, orders control planes before workers, or runs more than one control plane at a time.",
  },
  {
    code: "DrainBoundTooShort",
    area: "plan",
    retry: "never",
    meaning:
      "The plan's drain bound is shorter than a pod's termination grace period, and no reviewed partial-drain recovery is bound.",
  },
  {
    code: "PlanSemanticInvalid",
    area: "plan",
    retry: "never",
    meaning: "The plan violates a semantic rule not covered by a more specific reason.",
  },

  // --- signatures and approval policy -------------------------------------------------------
  {
    code: "SignatureMissing",
    area: "trust",
    retry: "never",
    meaning: "The plan has no signature file beside it.",
  },
  {
    code: "SignatureMalformed",
    area: "trust",
    retry: "never",
    meaning: "A signature is not a well-formed armored SSHSIG blob.",
  },
  {
    code: "SignatureInvalid",
    area: "trust",
    retry: "never",
    meaning: "A signature does not verify over the plan bytes (tampered plan or wrong key).",
  },
  {
    code: "SignatureNamespaceMismatch",
    area: "trust",
    retry: "never",
    meaning: "A signature was made for another namespace than cairn-plan.",
  },
  {
    code: "SignerNotTrusted",
    area: "trust",
    retry: "never",
    meaning: "No allowed_signers line accepts the signing key for this namespace and time.",
  },
  {
    code: "SignerOutsideValidity",
    area: "trust",
    retry: "never",
    meaning:
      "The signer's allowed_signers line is not valid at verification time (valid-after / valid-before).",
  },
  {
    code: "AllowedSignersInvalid",
    area: "trust",
    retry: "never",
    meaning:
      "A line of the allowed_signers file is malformed; it is an error, never silently skipped.",
  },
  {
    code: "CertificateAuthorityUnsupported",
    area: "trust",
    retry: "never",
    meaning: "allowed_signers uses cert-authority, which cairn does not implement.",
  },
  {
    code: "UnsupportedKeyType",
    area: "trust",
    retry: "never",
    meaning: "The signature uses a key or signature algorithm cairn does not accept.",
  },
  {
    code: "AuthorSignatureMissing",
    area: "trust",
    retry: "never",
    meaning: "The plan's author has not signed it.",
  },
  {
    code: "ApprovalsInsufficient",
    area: "trust",
    retry: "never",
    meaning: "Fewer approvers than the policy requires (approvers must differ from the author).",
  },
  {
    code: "PlanChangedAfterApproval",
    area: "trust",
    retry: "never",
    meaning:
      "A plan file changed after the journal bound its name to a digest; the change is refused.",
  },

  // --- evidence: pinned upstream sources ---------------------------------------------------
  {
    code: "EvidenceManifestInvalid",
    area: "evidence",
    retry: "never",
    meaning: "The evidence manifest is not well-formed YAML or does not match the manifest schema.",
  },
  {
    code: "EvidenceHashMismatch",
    area: "evidence",
    retry: "never",
    meaning:
      "A pinned file's SHA-256 (cached or downloaded) differs from the hash the manifest declares.",
  },
  {
    code: "EvidenceFileMissing",
    area: "evidence",
    retry: "never",
    meaning: "A pinned file is absent from the evidence cache; run the check with --fetch.",
  },
  {
    code: "EvidenceFetchFailed",
    area: "evidence",
    retry: "backoff",
    meaning: "git could not fetch a pinned file at its exact revision from the repository URL.",
  },
  {
    code: "EvidenceAssertionFailed",
    area: "evidence",
    retry: "never",
    meaning:
      "A named assertion over pinned files does not hold (call order, independence, contents).",
  },
  {
    code: "EvidenceControlUnexpectedlyPassed",
    area: "evidence",
    retry: "never",
    meaning:
      "A control that must fail passed; the checker cannot be trusted to detect the failure it guards.",
  },
  {
    code: "EvidenceSecretDetected",
    area: "evidence",
    retry: "never",
    meaning:
      "Evidence results contain secret-looking content (private-key block, token); they are refused.",
  },

  // --- oci: installer image digests -------------------------------------------------------
  {
    code: "ImageReferenceInvalid",
    area: "oci",
    retry: "never",
    meaning: "An image reference is not host/repository:tag or host/repository@sha256:digest.",
  },
  {
    code: "ImageNotFound",
    area: "oci",
    retry: "never",
    meaning:
      "The registry reports the repository or manifest unknown; no tag or default is substituted.",
  },
  {
    code: "ImagePlatformMissing",
    area: "oci",
    retry: "never",
    meaning: "The image index has no manifest for the requested os/architecture[/variant].",
  },
  {
    code: "RegistryUnreadable",
    area: "oci",
    retry: "backoff",
    meaning:
      "The registry could not be reached, refused authentication, or answered with an unexpected response.",
  },
  {
    code: "DigestMismatch",
    area: "oci",
    retry: "never",
    meaning:
      "A manifest's SHA-256 differs from Docker-Content-Digest or from the digest pinned in the reference.",
  },

  // --- catalogue refresh -------------------------------------------------------------------
  {
    code: "CatalogueSourceUnreadable",
    area: "catalogue",
    retry: "backoff",
    meaning:
      "The releases API or support matrix could not be read or does not have the expected shape.",
  },

  // --- kube: Kubernetes API boundary --------------------------------------------------------
  {
    code: "KubeUnreachable",
    area: "kube",
    retry: "backoff",
    meaning: "The Kubernetes API server could not be reached or the connection broke mid-request.",
  },
  {
    code: "KubeUnauthorized",
    area: "kube",
    retry: "never",
    meaning: "The Kubernetes API server rejected the credentials (401).",
  },
  {
    code: "KubeForbidden",
    area: "kube",
    retry: "never",
    meaning: "The Kubernetes API server refused the request for these credentials (403).",
  },
  {
    code: "KubeNotFound",
    area: "kube",
    retry: "never",
    meaning: "The Kubernetes object or resource type does not exist (404).",
  },
  {
    code: "KubeConflict",
    area: "kube",
    retry: "backoff",
    meaning:
      "The object changed since it was read (409, stale resourceVersion or field-manager conflict); re-read before deciding again.",
  },
  {
    code: "KubeRateLimited",
    area: "kube",
    retry: "backoff",
    meaning: "The Kubernetes API server asked the client to slow down (429 outside eviction).",
  },
  {
    code: "KubeServerError",
    area: "kube",
    retry: "backoff",
    meaning: "The Kubernetes API server answered with a 5xx error.",
  },
  {
    code: "KubeInvalidRequest",
    area: "kube",
    retry: "never",
    meaning: "The Kubernetes API server rejected the request as malformed or invalid (400/422).",
  },
  {
    code: "KubeBadResponse",
    area: "kube",
    retry: "backoff",
    meaning: "The Kubernetes API server answered with a body cairn cannot interpret.",
  },
  {
    code: "KubeWatchExpired",
    area: "kube",
    retry: "backoff",
    meaning: "A watch asked for a resourceVersion the server no longer keeps (410 Gone); re-list.",
  },
  {
    code: "EvictionBlocked",
    area: "kube",
    retry: "wait",
    meaning:
      "A PodDisruptionBudget allows no disruption now, or its status is stale (429 on eviction).",
  },
  {
    code: "EvictionMultiplePdbs",
    area: "kube",
    retry: "never",
    meaning:
      "More than one PodDisruptionBudget selects the pod; the API server refuses to evict it.",
  },
  {
    code: "EvictionRefused",
    area: "kube",
    retry: "never",
    meaning:
      "The eviction was refused for a reason a retry will not fix (403, namespace terminating, invalid request).",
  },
] as const satisfies readonly ReasonInfo[];

/** A stable reason code. */
export type Reason = (typeof REASONS)[number]["code"];

const BY_CODE: ReadonlyMap<string, ReasonInfo> = new Map(REASONS.map((r) => [r.code, r]));

/**
 * Looks up a reason's catalogue entry.
 *
 * @example
 * ```ts
 * import { reasonInfo } from "./reasons.ts";
 * reasonInfo("PlanExpired").retry; // "never"
 * ```
 */
export function reasonInfo(code: Reason): ReasonInfo {
  const info = BY_CODE.get(code);
  if (!info) throw new RangeError(`reason ${code} is not in the catalogue`);
  return info;
}

/** True when `code` is a catalogued reason. */
export function isReason(code: string): code is Reason {
  return BY_CODE.has(code);
}
