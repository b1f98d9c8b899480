/**
 * The reason catalogue: every stable reason code cairn reports, with its meaning and retry class.
 * Reason codes are API (users grep for them, reports and JSON output carry them); renaming one is
 * a breaking change. `docs/reasons.md` is generated from this list (`deno task reasons`) and CI
 * checks that it is current.
 *
 * Retry classes: - `never`: terminal for this input; a human must change the plan, the trust root
 * or the cluster. - `backoff`: transient; the same read may be tried again later. Never permission
 * to repeat a mutation.
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
  {
    code: "PortInUse",
    area: "cli",
    retry: "backoff",
    meaning: "The address cairn was asked to listen on is already held by another program.",
  },
  {
    code: "JournalMissing",
    area: "cli",
    retry: "never",
    meaning: "A read-only command was pointed at a journal file that does not exist; " +
      "nothing was created.",
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
    meaning:
      "YAML aliases in a plan, a health policy or a tuppr manifest would expand beyond the allowed budget (alias bomb).",
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
    code: "AuthoringInputInvalid",
    area: "plan",
    retry: "never",
    meaning:
      "`plan new` or `plan bind` cannot build the plan from its inputs (node source, versions, bound files, flags); nothing is written.",
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
      "A transport deadline exceeds its verification deadline, a deadline is not positive, or a drain bound outlasts the drain's transport deadline.",
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
  {
    code: "CatalogueInvalid",
    area: "plan",
    retry: "never",
    meaning: "The release catalogue snapshot is not a well-formed catalogue file.",
  },
  {
    code: "InstallerImageMismatch",
    area: "plan",
    retry: "never",
    meaning:
      "A hop's installer image does not match its target version, schematic or platform, or lacks a digest.",
  },
  {
    code: "RpcPathMismatch",
    area: "plan",
    retry: "never",
    meaning:
      "A hop's RPC path (lifecycle or legacy) disagrees with the version range its source version is in.",
  },
  {
    code: "ParallelismUnsupported",
    area: "plan",
    retry: "never",
    meaning: "The plan asks for more than one node at a time; cairn upgrades one node at a time.",
  },
  {
    code: "RecoveryActionInvalid",
    area: "plan",
    retry: "never",
    meaning:
      "An authorised recovery action is repeated, or a partial drain lacks its explicit review entry.",
  },
  {
    code: "ConfigApplyModeUnsupported",
    area: "plan",
    retry: "never",
    meaning: "The ConfigApply mode is not accepted by the Talos version the plan targets.",
  },
  {
    code: "ConfigApplyModeMismatch",
    area: "plan",
    retry: "never",
    meaning:
      "The ConfigApply mode cannot bring the change's activation class about with every step journaled on its own: immediate needs noReboot, explicit activation needs staged (cairn reboots separately), reboot and try are never executed.",
  },
  {
    code: "ConfigActivationUnknown",
    area: "plan",
    retry: "never",
    meaning:
      "A setting in the effective configuration change has no activation rule for the running Talos minor; the plan is held for review (docs/config-apply.md#the-activation-table).",
  },
  {
    code: "ConfigActivationMismatch",
    area: "plan",
    retry: "never",
    meaning:
      "The activation class the ConfigApply plan declares is not the class of the effective change it would send.",
  },
  {
    code: "ConfigPatchInvalid",
    area: "plan",
    retry: "never",
    meaning:
      "The ConfigApply patch is not a YAML mapping cairn can merge (several documents, a directive such as $patch, not a mapping).",
  },
  {
    code: "ComponentPinDigestMismatch",
    area: "plan",
    retry: "never",
    meaning:
      "A pin file a ComponentUpgrade binds (the bump's files as reviewed at the branch head) is missing or has another SHA-256 on the watched branch now; the plan is refused and nothing is observed as its delivery.",
  },
  {
    code: "ComponentUnknown",
    area: "plan",
    retry: "never",
    meaning:
      "A ComponentUpgrade names a component no playbook describes (the playbook's id, `playbooks/<id>.yaml`, is the one name of a component; the message lists the known ids), or one upgraded by a plan kind of its own (talos, kubernetes).",
  },
  {
    code: "ConfigPatchDigestMismatch",
    area: "plan",
    retry: "never",
    meaning:
      "The ConfigApply patch at the bound path is missing, refused or has another SHA-256 than the plan binds; nothing is sent.",
  },
  {
    code: "ConfigUnreadable",
    area: "executor",
    retry: "backoff",
    meaning:
      "The node's active or persistent machine configuration (MachineConfigs.config.talos.dev) could not be read; nothing is classified or sent.",
  },
  {
    code: "ConfigStagedPending",
    area: "executor",
    retry: "never",
    meaning:
      "The node's persistent machine configuration differs from its active one (a staged change not yet in effect); an apply would overwrite or activate it unseen.",
  },
  {
    code: "ConfigNotStored",
    area: "executor",
    retry: "never",
    meaning:
      "After an accepted apply, the node's persistent machine configuration does not hold the applied document.",
  },
  {
    code: "ConfigApplied",
    area: "executor",
    retry: "wait",
    meaning:
      "Every attempt of a ConfigApply step was accepted; the step is verifying which settings are active.",
  },
  {
    code: "ConfigApplyRejected",
    area: "executor",
    retry: "never",
    meaning:
      "The node refused the ApplyConfiguration as invalid before changing anything (e.g. v1.13 NO_REBOOT for a change that needs a reboot); the operation is rejected.",
  },
  {
    code: "ConfigApplyResponseLost",
    area: "executor",
    retry: "never",
    meaning:
      "The ApplyConfiguration was sent but no answer came back; it may have been stored. The operation is unresolved until accounted for.",
  },
  {
    code: "ConfigApplyRefused",
    area: "executor",
    retry: "never",
    meaning:
      "The node answered the ApplyConfiguration with an error other than a validation refusal; the operation is unresolved.",
  },
  {
    code: "ConfigNotActive",
    area: "executor",
    retry: "never",
    meaning:
      "A setting was stored but was not observed active on the running node by its verification deadline (a matching configuration digest never proves activation).",
  },
  {
    code: "PowercycleOnSecureBoot",
    area: "plan",
    retry: "never",
    meaning:
      "A TalosUpgrade asks rebootMode powercycle while it installs a Secure Boot image (<platform>-installer-secureboot); on Secure Boot nodes a powercycle reboot never fired and left a node drained and cordoned on the old version. Use rebootMode default.",
  },
  {
    code: "HealthPolicyMissing",
    area: "plan",
    retry: "wait",
    meaning: "The health policy file the plan binds is missing or unreadable; the plan is held.",
  },
  {
    code: "HealthPolicyDigestMismatch",
    area: "plan",
    retry: "never",
    meaning:
      "The health policy file differs from the digest the plan binds; it changed after the plan was written.",
  },
  {
    code: "HealthPolicyClusterMismatch",
    area: "plan",
    retry: "never",
    meaning: "The health policy the plan binds is written for a different cluster than the plan's.",
  },
  {
    code: "EvidenceManifestMissing",
    area: "plan",
    retry: "wait",
    meaning:
      "The evidence manifest file the plan binds is missing or unreadable; the plan is held.",
  },
  {
    code: "BoundPathInvalid",
    area: "plan",
    retry: "never",
    meaning:
      "A bound path (catalogue, health policy, evidence manifest, config) is absolute, has '..', '.' or empty segments, a backslash or a control character, or resolves outside the repository root.",
  },
  {
    code: "BoundPathSymlink",
    area: "plan",
    retry: "never",
    meaning:
      "A bound path goes through a symbolic link (the file or any directory on the way); bound files are read only as what the repository holds.",
  },
  {
    code: "BoundFileNotRegular",
    area: "plan",
    retry: "never",
    meaning: "A bound path names a directory, device, FIFO or socket rather than a regular file.",
  },
  {
    code: "BoundFileTooLarge",
    area: "plan",
    retry: "never",
    meaning:
      "A bound file is larger than the size cap; it is refused before its contents are read.",
  },
  {
    code: "EvidenceManifestDigestMismatch",
    area: "plan",
    retry: "never",
    meaning:
      "The evidence manifest differs from the digest the plan binds; it changed after the plan was written.",
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
  {
    code: "SigningFailed",
    area: "trust",
    retry: "never",
    meaning:
      "ssh-keygen could not sign the plan (missing or unreadable key, wrong passphrase, no ssh-keygen).",
  },
  // Re-checked at dispatch, on current evidence (docs/safeguards.md#dispatch-re-check).
  {
    code: "TrustRootUnreadable",
    area: "trust",
    retry: "wait",
    meaning:
      "The allowed_signers trust root could not be read or parsed when a plan was about to be dispatched; nothing is sent until it can be.",
  },
  {
    code: "ClusterIdentityMismatch",
    area: "trust",
    retry: "never",
    meaning:
      "The cluster connected to names itself differently (Talos Infos.cluster.talos.dev clusterName) from the plan's metadata.cluster; nothing is sent.",
  },
  {
    code: "ClusterIdentityUnreadable",
    area: "trust",
    retry: "wait",
    meaning:
      "The identity of the cluster connected to could not be read from the cluster; the plan is held, nothing is sent.",
  },
  {
    code: "HealthPolicyOverrideMismatch",
    area: "trust",
    retry: "never",
    meaning:
      "A health policy given on the command line differs from the one the plan binds by digest; the bound policy is the policy.",
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
    code: "EvidenceFetchTimedOut",
    area: "evidence",
    retry: "backoff",
    meaning:
      "A git call of an evidence fetch outlived its deadline or the fetch's budget and was killed; the file is unread, never a pass.",
  },
  {
    code: "EvidenceCacheUnsafe",
    area: "evidence",
    retry: "never",
    meaning:
      "An evidence cache entry, or a directory on its path, is a symbolic link, not a regular file or directory, or over the size cap; it is neither read nor written (a cache inside someone else's checkout cannot redirect cairn).",
  },
  {
    code: "EvidenceRepoUrlInvalid",
    area: "evidence",
    retry: "never",
    meaning:
      "A manifest source's repo is not an https://, ssh://, git://, file:// URL or scp-like user@host:path (e.g. it starts with '-', has control characters or non-ASCII text, names an ext:: remote helper or embeds a password).",
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
  {
    code: "InstallerDigestMismatch",
    area: "oci",
    retry: "never",
    meaning:
      "A hop's installer reference resolves (for the plan's platform) to another digest than the one the plan pins; nothing is sent.",
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
    code: "KubeTimeout",
    area: "kube",
    retry: "backoff",
    meaning:
      "A Kubernetes call got no complete answer within its deadline (the phase's transport time) and was abandoned: a read is unreadable, a write's outcome is unknown (the attempt stays unaccounted).",
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
    code: "KubeconfigInvalid",
    area: "kube",
    retry: "never",
    meaning: "The kubeconfig cannot be read or parsed, or its context names no cluster.",
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

  // --- health: policy, readers and rounds ---------------------------------------------------
  {
    code: "HealthPolicySyntaxInvalid",
    area: "health",
    retry: "never",
    meaning: "The health policy file is not well-formed YAML (or holds more than one document).",
  },
  {
    code: "HealthPolicyInvalid",
    area: "health",
    retry: "never",
    meaning:
      "A health policy field is missing, has the wrong type, is unknown, or breaks a policy rule (duplicate binding names, a CEL expression that does not parse).",
  },
  {
    code: "HealthCheckPassed",
    area: "health",
    retry: "wait",
    meaning: "The health check passed on fresh evidence in this round (informational).",
  },
  {
    code: "HealthCheckFailed",
    area: "health",
    retry: "wait",
    meaning: "A health check's predicate is false on fresh evidence.",
  },
  {
    code: "HealthObjectNotFound",
    area: "health",
    retry: "wait",
    meaning: "The object a binding names does not exist; a missing object is never healthy.",
  },
  {
    code: "HealthSelectionEmpty",
    area: "health",
    retry: "wait",
    meaning: "The binding's selection matched fewer objects than its required coverage.",
  },
  {
    code: "HealthStatusMissing",
    area: "health",
    retry: "wait",
    meaning:
      "The object has no status (its controller has not reported); unreadable, never a pass.",
  },
  {
    code: "HealthGenerationStale",
    area: "health",
    retry: "wait",
    meaning:
      "The object's status.observedGeneration is older than metadata.generation; its status describes an older spec.",
  },
  {
    code: "HealthCelError",
    area: "health",
    retry: "wait",
    meaning:
      "The CEL predicate raised an error or did not return a boolean on this object (e.g. an absent field without has()).",
  },
  {
    code: "HealthCacheStale",
    area: "health",
    retry: "backoff",
    meaning:
      "The watch cache behind this reader is disconnected or not yet synced; the reading is unreadable until it resyncs.",
  },
  {
    code: "HealthListStale",
    area: "health",
    retry: "backoff",
    meaning:
      "A fresh list (a round that decides a terminal state) came back at an older resourceVersion than this reader had already seen: a stale read, unreadable, never a classification.",
  },
  {
    code: "HealthObservationTooOld",
    area: "health",
    retry: "backoff",
    meaning: "The newest evidence is older than the binding's freshness bound.",
  },
  {
    code: "HealthReadTimedOut",
    area: "health",
    retry: "backoff",
    meaning:
      "The read did not finish within the binding timeout or the round's remaining time; unreadable, not a failed check.",
  },
  {
    code: "HealthReadFailed",
    area: "health",
    retry: "backoff",
    meaning: "The reader could not obtain evidence (API error, unreachable endpoint).",
  },
  {
    code: "HealthRoundLate",
    area: "health",
    retry: "backoff",
    meaning:
      "A result arrived after the round's collection interval closed; it cannot count for the round.",
  },
  {
    code: "HealthRouteFailed",
    area: "health",
    retry: "wait",
    meaning:
      "A product's health route answered, through the API server's proxy, that it is not healthy (an object store's S3 root refused, a broker server's streams not current).",
  },
  {
    code: "HealthRouteUnreachable",
    area: "health",
    retry: "backoff",
    meaning:
      "A product's health route gave no answer of its own: the API server's proxy could not reach it, access was refused, or the answer was cut or unparseable. Unreadable, never a pass; no exec or credential fallback.",
  },
  {
    code: "HealthMembersMissing",
    area: "health",
    retry: "wait",
    meaning:
      "A metrics-storage or MQTT cluster reports fewer running members than its product contract requires (replicas per shard, core and replicant nodes).",
  },
  {
    code: "HealthResultMissing",
    area: "health",
    retry: "backoff",
    meaning: "A binding produced no result in the round; the round cannot pass.",
  },
  {
    code: "NodeNotReady",
    area: "health",
    retry: "wait",
    meaning: "A node's Ready condition is not True.",
  },
  {
    code: "NodeCordoned",
    area: "health",
    retry: "wait",
    meaning:
      "A node is unschedulable and the cordon is not the named target's operation-owned cordon.",
  },
  {
    code: "WorkloadNotReady",
    area: "health",
    retry: "wait",
    meaning:
      "A Deployment, StatefulSet or DaemonSet has fewer ready/updated/available replicas than desired.",
  },
  {
    code: "PdbBlocksPermanently",
    area: "health",
    retry: "never",
    meaning:
      "A PodDisruptionBudget can never allow an eviction of the node's pods as specified (minAvailable equals the matched pods, maxUnavailable 0).",
  },
  {
    code: "PdbBlocksTemporarily",
    area: "health",
    retry: "wait",
    meaning:
      "A PodDisruptionBudget currently allows 0 disruptions for a pod on the node (e.g. another matched pod is unready).",
  },
  {
    code: "PdbMultipleMatch",
    area: "health",
    retry: "never",
    meaning:
      "More than one PodDisruptionBudget selects one pod on the node; the Eviction API refuses such a pod.",
  },
  {
    code: "PdbPolicyUnknown",
    area: "health",
    retry: "never",
    meaning:
      "A PodDisruptionBudget names an unhealthyPodEvictionPolicy cairn does not recognise; unhealthy pods are treated as not evictable.",
  },
  {
    code: "EtcdMemberUnhealthy",
    area: "health",
    retry: "wait",
    meaning: "An etcd member is not healthy, or the member list and member statuses disagree.",
  },
  {
    code: "EtcdLearnerPresent",
    area: "health",
    retry: "wait",
    meaning: "The etcd cluster has a learner member; membership is changing.",
  },
  {
    code: "EtcdAlarmActive",
    area: "health",
    retry: "wait",
    meaning: "An etcd alarm (NOSPACE, CORRUPT) is raised.",
  },
  {
    code: "EtcdQuorumAtRisk",
    area: "health",
    retry: "wait",
    meaning:
      "Removing the target node's etcd member would leave fewer healthy members than a quorum.",
  },
  {
    code: "TalosServiceUnhealthy",
    area: "health",
    retry: "wait",
    meaning: "A Talos service is not running or not healthy on a node.",
  },
  {
    code: "NodeVersionMismatch",
    area: "health",
    retry: "wait",
    meaning: "A node runs a Talos version other than the expected one.",
  },
  {
    code: "NodeSchematicMismatch",
    area: "health",
    retry: "wait",
    meaning: "A node runs an Image Factory schematic other than the expected one.",
  },
  {
    code: "NodeKubeletMismatch",
    area: "health",
    retry: "wait",
    meaning: "A node's kubelet version differs from the expected one.",
  },
  // --- git: plan source and report branch ---------------------------------------------------
  {
    code: "PlanPathInvalid",
    area: "git",
    retry: "never",
    meaning:
      "A plan or report path is unsafe (parent or absolute path, control character, leading dot, over 100 characters); it is refused, never read or written.",
  },
  {
    code: "GitUnavailable",
    area: "git",
    retry: "never",
    meaning: "The git program cannot be started (not installed or not on PATH).",
  },
  {
    code: "GitFetchFailed",
    area: "git",
    retry: "backoff",
    meaning:
      "Fetching from the watched Git remote failed (unreachable, refused, or not a repository).",
  },
  {
    code: "GitBranchMissing",
    area: "git",
    retry: "wait",
    meaning: "The watched branch does not exist on the Git remote.",
  },
  {
    code: "GitObjectMissing",
    area: "git",
    retry: "never",
    meaning: "A commit or file cairn asked for is not in the fetched history.",
  },
  {
    code: "GitPushRejected",
    area: "git",
    retry: "backoff",
    meaning:
      "The report branch kept moving: every bounded rebase-and-retry was rejected as non-fast-forward. Never force-pushed.",
  },
  {
    code: "GitPushFailed",
    area: "git",
    retry: "backoff",
    meaning: "Pushing a report commit failed for a reason other than a non-fast-forward rejection.",
  },
  {
    code: "GitCommandFailed",
    area: "git",
    retry: "backoff",
    meaning: "A local git command on cairn's private cache repository failed.",
  },
  {
    code: "GitTimedOut",
    area: "git",
    retry: "backoff",
    meaning:
      "A git command outlived its deadline (e.g. a remote that accepts and never answers) and was killed with every process it started.",
  },
  {
    code: "GitStopped",
    area: "git",
    retry: "backoff",
    meaning:
      "A git command was killed, with every process it started, because cairn is stopping (SIGTERM); what it was doing is not assumed done.",
  },
  // --- journal: ER operations, fencing, evidence chain ---------------------------------------
  {
    code: "JournalSchemaTooNew",
    area: "journal",
    retry: "never",
    meaning:
      "The journal was written by a newer cairn (its schema version is unknown to this one); it is left untouched.",
  },
  {
    code: "JournalUnmigrated",
    area: "journal",
    retry: "never",
    meaning:
      "The journal has pending migrations and was opened without migrating; run `cairn journal migrate`.",
  },
  {
    code: "JournalUnavailable",
    area: "journal",
    retry: "backoff",
    meaning: "The journal database cannot be opened or a statement failed.",
  },
  {
    code: "JournalTimedOut",
    area: "journal",
    retry: "backoff",
    meaning:
      "A journal statement passed its deadline (PostgreSQL's statement_timeout or lock wait, or no answer from the server within the client's deadline); its transaction committed whole or not at all, and nothing depending on it was sent.",
  },
  {
    code: "JournalChainBroken",
    area: "journal",
    retry: "never",
    meaning:
      "An event row's hash does not match the chain recomputed from the first row: the timeline was rewritten.",
  },
  {
    code: "OperationNotFound",
    area: "journal",
    retry: "never",
    meaning: "No operation, attempt, observation or plan has the given id in this journal.",
  },
  {
    code: "TransitionIllegal",
    area: "journal",
    retry: "never",
    meaning:
      "The requested operation state change is not in ER's transition table, or the evidence it needs is not recorded.",
  },
  {
    code: "OwnerFenced",
    area: "journal",
    retry: "never",
    meaning:
      "The caller's owner, generation or epoch no longer matches the operation (a takeover or recovery entry happened); the caller must stop.",
  },
  {
    code: "RecoveryEntered",
    area: "journal",
    retry: "never",
    meaning:
      "Recovery mode was entered after the plan was bound (a journal restore): a new epoch; the journal may be behind the cluster, and the plan's approval is stale.",
  },
  {
    code: "EpochSuperseded",
    area: "journal",
    retry: "never",
    meaning:
      "The caller's epoch is not the journal's current epoch (recovery mode was entered); the process must restart.",
  },
  {
    code: "ComponentEndRecorded",
    area: "journal",
    retry: "never",
    meaning:
      "The ComponentUpgrade's end is already journaled (a plan has one end, the first recorded): a second replica's own observation is not recorded; it reports the journaled end.",
  },
  {
    code: "CommitmentRefused",
    area: "journal",
    retry: "wait",
    meaning:
      "The commitment transaction refused to create an operation; the comparison and cause are recorded.",
  },
  {
    code: "AttemptRefused",
    area: "journal",
    retry: "wait",
    meaning:
      "The attempt transaction refused; nothing may be sent. The comparison and cause are recorded.",
  },
  {
    code: "RecoveryDecisionRefused",
    area: "journal",
    retry: "wait",
    meaning:
      "A recovery-admin decision lacks what ER requires (executor stopped or taken over, settle floor elapsed, a later observation).",
  },
  {
    code: "ResumeRefused",
    area: "journal",
    retry: "never",
    meaning:
      "The journal refused to resume a taken-over operation: it did not become unresolved by a controller's takeover, an attempt answered other than accepted, an unaccounted attempt has no reading or is of a phase a reading cannot decide, or authority or the gate does not allow it; the operation stays unresolved.",
  },
  {
    code: "SettleFloorTooShort",
    area: "journal",
    retry: "never",
    meaning: "The configured settle floor is below 30 seconds.",
  },
  {
    code: "CancellationRefused",
    area: "journal",
    retry: "never",
    meaning:
      "No-attempt cancellation is not allowed: an attempt exists or no ER ground holds (a closed gate is not a ground).",
  },
  {
    code: "RoleNotPermitted",
    area: "journal",
    retry: "never",
    meaning: "The acting identity's role may not perform this journal act.",
  },
  {
    code: "RecoveryScopesOpen",
    area: "journal",
    retry: "wait",
    meaning:
      "Recovery mode cannot be left while a machine scope is not released in the current epoch.",
  },
  // --- talos: Talos machine API boundary ------------------------------------------------------
  {
    code: "TalosUnavailable",
    area: "talos",
    retry: "backoff",
    meaning:
      "apid or the target node could not be reached (gRPC UNAVAILABLE); a mutation's effect is unknown.",
  },
  {
    code: "TalosDeadlineExceeded",
    area: "talos",
    retry: "backoff",
    meaning:
      "A Talos call got no answer within its deadline; a mutation may still have taken effect.",
  },
  {
    code: "TalosCancelled",
    area: "talos",
    retry: "backoff",
    meaning:
      "A Talos call was cancelled before its answer arrived; a mutation's effect is unknown.",
  },
  {
    code: "TalosPermissionDenied",
    area: "talos",
    retry: "never",
    meaning:
      "The client certificate's role (its O= values) may not call this Talos method; use an os:admin talosconfig for upgrades.",
  },
  {
    code: "TalosInvalidArgument",
    area: "talos",
    retry: "never",
    meaning: "Talos refused the request as malformed (bad image reference, routing, mode).",
  },
  {
    code: "TalosPreconditionFailed",
    area: "talos",
    retry: "wait",
    meaning:
      "Talos refused because of machine state, e.g. another installation is still holding the lifecycle lock.",
  },
  {
    code: "TalosNotControlPlane",
    area: "talos",
    retry: "never",
    meaning: "An etcd call was sent to a node that is not a control plane.",
  },
  {
    code: "TalosUnimplemented",
    area: "talos",
    retry: "never",
    meaning: "The node's Talos version does not implement this method or mode.",
  },
  {
    code: "TalosNotFound",
    area: "talos",
    retry: "never",
    meaning: "The file or object asked of Talos does not exist on the node.",
  },
  {
    code: "TalosInternal",
    area: "talos",
    retry: "backoff",
    meaning:
      "Talos answered with an internal error (e.g. installer image missing from containerd).",
  },
  {
    code: "TalosStreamIncomplete",
    area: "talos",
    retry: "backoff",
    meaning:
      "A Talos stream ended without its final item (no image name, no installer exit code); the outcome is unknown.",
  },
  {
    code: "TalosInstallFailed",
    area: "talos",
    retry: "never",
    meaning: "The Talos installer exited with a non-zero exit code; nothing was written to boot.",
  },
  {
    code: "TalosconfigInvalid",
    area: "talos",
    retry: "never",
    meaning:
      "The talosconfig is unreadable or lacks the context, endpoints, CA, certificate or key cairn needs.",
  },
  // --- executor ------------------------------------------------------------------------
  {
    code: "PlanKindNotExecutable",
    area: "executor",
    retry: "never",
    meaning:
      "This command executes TalosUpgrade plans only; other kinds are checked and previewed.",
  },
  {
    code: "GateFailed",
    area: "executor",
    retry: "wait",
    meaning: "The fresh health gate before a node's commitment failed; no operation was created.",
  },
  {
    code: "GateUnreadable",
    area: "executor",
    retry: "wait",
    meaning:
      "The health gate could not read every bound check; absence of evidence commits nothing.",
  },
  {
    code: "NodeVersionUnexpected",
    area: "executor",
    retry: "never",
    meaning: "The node does not run the version the plan's first hop starts from.",
  },
  {
    code: "TargetReachedOutOfBand",
    area: "executor",
    retry: "never",
    meaning:
      "The node already runs the target version; an unattempted upgrade cannot be completed.",
  },
  {
    code: "PullResponseLost",
    area: "executor",
    retry: "wait",
    meaning: "The image pull's response was lost; the attempt is unaccounted.",
  },
  {
    code: "PullRefused",
    area: "executor",
    retry: "never",
    meaning: "The node refused the image pull.",
  },
  {
    code: "InstallFailed",
    area: "executor",
    retry: "never",
    meaning:
      "The installer ran and exited non-zero; the operation failed and is never retried automatically.",
  },
  {
    code: "InstallResponseLost",
    area: "executor",
    retry: "wait",
    meaning:
      "The install's outcome is unknown (response lost); install is never re-run before a reboot.",
  },
  {
    code: "InstallRefused",
    area: "executor",
    retry: "never",
    meaning: "The node refused the install (e.g. another install holds the lock).",
  },
  {
    code: "RebootResponseLost",
    area: "executor",
    retry: "wait",
    meaning:
      "The reboot's response was lost; unresolved even if the target version later appears, until accounted.",
  },
  {
    code: "RebootRefused",
    area: "executor",
    retry: "never",
    meaning: "The node refused the reboot request.",
  },
  {
    code: "CordonNotApplied",
    area: "executor",
    retry: "wait",
    meaning: "The cordon was not applied (the node changed since it was read, or is gone).",
  },
  {
    code: "UncordonNotApplied",
    area: "executor",
    retry: "wait",
    meaning: "The uncordon of an owned cordon was not applied.",
  },
  {
    code: "DrainPlanRefused",
    area: "executor",
    retry: "never",
    meaning:
      "The drain plan was refused (grace periods beyond the drain bound, or unreplicated pods).",
  },
  {
    code: "DrainIncomplete",
    area: "executor",
    retry: "wait",
    meaning:
      "The drain bound passed with pods remaining, or an eviction was refused; facts are kept, nothing is forced.",
  },
  {
    code: "BootNotObserved",
    area: "executor",
    retry: "wait",
    meaning: "The node was not seen back in the target version by the reboot deadline.",
  },
  {
    code: "BootedOtherVersion",
    area: "executor",
    retry: "never",
    meaning:
      "The node booted back into another version than the hop's target (e.g. the old boot slot).",
  },
  {
    code: "BootIdUnreadable",
    area: "executor",
    retry: "wait",
    meaning: "The node's boot ID could not be read before the reboot.",
  },
  {
    code: "NodeUnreadable",
    area: "executor",
    retry: "backoff",
    meaning: "The node could not be read.",
  },
  {
    code: "PodsUnreadable",
    area: "executor",
    retry: "backoff",
    meaning:
      "The node's pods could not be listed for drain planning (an error or the call's deadline); nothing was evicted and the step is held.",
  },
  {
    code: "NodeNotFound",
    area: "executor",
    retry: "never",
    meaning: "The node is not in the cluster.",
  },
  {
    code: "MachineIdentityMismatch",
    area: "executor",
    retry: "never",
    meaning:
      "The machine at the plan's address is not the plan's node: the Kubernetes Node's systemUUID and the SMBIOS UUID Talos reports at that address differ, or differ from the identity bound at commitment (a reused address, a replaced or re-imaged machine). Refused before any mutation.",
  },
  {
    code: "MachineIdentityUnreadable",
    area: "executor",
    retry: "wait",
    meaning:
      "The machine's identity could not be read on both sides (the Kubernetes Node's systemUUID, Talos SystemInformation at the plan's address); nothing is sent, and an operation already committed stays unresolved, never failed.",
  },
  {
    code: "VerificationHealthFailed",
    area: "executor",
    retry: "never",
    meaning: "Bound health still failed at the verification deadline.",
  },
  {
    code: "HealthFailedElsewhere",
    area: "executor",
    retry: "wait",
    meaning:
      "Bound health still failed at the deadline, but only on other nodes than the target (a cordon or a NotReady elsewhere): the target is neither failed nor established, so it stays unresolved.",
  },
  {
    code: "VerificationHealthUnreadable",
    area: "executor",
    retry: "wait",
    meaning: "Bound health was still unreadable at the verification deadline.",
  },
  {
    code: "CompletionObserved",
    area: "executor",
    retry: "never",
    meaning: "A fresh, ordered completion observation established the bound postconditions.",
  },
  {
    code: "CompletionUnreadable",
    area: "executor",
    retry: "wait",
    meaning:
      "The completion observation could not be read in full; the operation stays unresolved.",
  },
  {
    code: "PostconditionContradicted",
    area: "executor",
    retry: "never",
    meaning: "The completion observation contradicts a bound postcondition; the operation failed.",
  },
  {
    code: "ClassificationRefused",
    area: "executor",
    retry: "wait",
    meaning:
      "The journal refused the completed or failed the executor asked for (the completion read was not ordered after the last accounting, a later read differs, or an attempt is unaccounted); the operation stays unresolved.",
  },
  {
    code: "ExecutorError",
    area: "executor",
    retry: "wait",
    meaning: "The executor hit an unexpected error mid-step; the operation is unresolved.",
  },
  {
    code: "LeadershipHandedOver",
    area: "executor",
    retry: "wait",
    meaning:
      "The next node hosts this cairn replica: before its step began, the replica handed leadership over; the new leader takes the step from the journal.",
  },
  {
    code: "SelfHostedNoStandby",
    area: "executor",
    retry: "wait",
    meaning:
      "The next node hosts this cairn replica and no other ready replica runs on another node to take the step over; held rather than draining the executor's own node mid-step.",
  },
  {
    code: "SelfPodUnknown",
    area: "executor",
    retry: "wait",
    meaning:
      "cairn could not read its own pod, so it cannot tell whether the next node hosts it; held before the step.",
  },
  {
    code: "Stopped",
    area: "executor",
    retry: "wait",
    meaning: "The controller was asked to stop between steps.",
  },
  {
    code: "StoppedByOperator",
    area: "executor",
    retry: "wait",
    meaning:
      "The run was stopped (SIGINT/SIGTERM) while a committed step was in flight: its operation is recorded unresolved with this reason, a request sent and not answered stays unaccounted (a stop is not a transport failure), and no health round cut short classifies anything; the next run takes it over (a TalosUpgrade step resumes from the journal) or `cairn recover` settles it.",
  },
  {
    code: "AlreadyCompleted",
    area: "executor",
    retry: "never",
    meaning: "The node's operation for this plan already completed.",
  },
  {
    code: "OperationExists",
    area: "executor",
    retry: "wait",
    meaning:
      "The node already has an operation for this plan that has not completed; it is resumed or recovered, never rerun.",
  },
  {
    code: "ResumeUndecided",
    area: "executor",
    retry: "never",
    meaning:
      "After a takeover, an earlier owner's in-flight request could not be classified from a fresh reading (a Talos call, a cordon whose precondition still holds, an unreadable node or pod list); the operation stays unresolved for recovery and nothing is sent.",
  },

  // --- reconcile: GitOps loop and reports --------------------------------------------------
  {
    code: "ExecutionHalted",
    area: "reconcile",
    retry: "wait",
    meaning: "The rollout stopped before every node completed; the report says where and why.",
  },
  {
    code: "SafeguardViolated",
    area: "reconcile",
    retry: "never",
    meaning: "The journal shows a safeguard that did not hold during execution.",
  },
  {
    code: "SafeguardUnreadable",
    area: "reconcile",
    retry: "wait",
    meaning:
      "The evidence a safeguard row needs was unreadable or missing from a deciding round; the row does not pass.",
  },
  {
    code: "PreviewWriteRefused",
    area: "reconcile",
    retry: "never",
    meaning:
      "The preview tried a cluster mutation; the read-only guard refused it before anything was sent, and the preview fails its read-only row.",
  },
  {
    code: "PlanNotApproved",
    area: "reconcile",
    retry: "never",
    meaning:
      "The merged plan is not validly signed and approved under the trust root; it is not executed.",
  },
  {
    code: "PlanInvalid",
    area: "reconcile",
    retry: "never",
    meaning: "The plan file does not parse or fails its checks; it is not executed.",
  },
  {
    code: "PlanQueued",
    area: "reconcile",
    retry: "wait",
    meaning: "The plan waits for its cluster's rollout slot, behind plans merged before it.",
  },
  // --- recovery: cairn recover ------------------------------------------------------------
  {
    code: "RecoveryNotApplicable",
    area: "recovery",
    retry: "never",
    meaning:
      "The requested recovery decision does not apply to this operation (terminal, already accounted, or not an unresolved operation with attempts).",
  },
  {
    code: "RecoveryAttemptsUnaccounted",
    area: "recovery",
    retry: "wait",
    meaning:
      "Classification is refused while an attempt is unaccounted; account it after the settle floor first.",
  },
  {
    code: "RecoveryUncordonRefused",
    area: "recovery",
    retry: "never",
    meaning:
      "Recovery lifts only an operation-owned cordon the plan authorises (uncordonOwnedCordon) whose ownership evidence is unchanged; anything else is left to humans.",
  },
  {
    code: "RecoveryTakeoverLost",
    area: "recovery",
    retry: "backoff",
    meaning: "Another takeover of the operation won; re-read the evidence and decide again.",
  },
  {
    code: "RecoveryObservationFailed",
    area: "recovery",
    retry: "backoff",
    meaning: "The node could not be read for a recovery observation; nothing was decided.",
  },
  {
    code: "RecoveryEvidenceInconclusive",
    area: "recovery",
    retry: "wait",
    meaning:
      "The completion observation was unreadable: the operation stays unresolved, scope held.",
  },
  {
    code: "RecoveryClassified",
    area: "recovery",
    retry: "never",
    meaning:
      "A recovery-admin classified an unresolved, fully accounted operation on a fresh completion observation (completed or failed); the transition's note carries the observation.",
  },
  // --- kubernetes-upgrade: KubernetesUpgrade preflight and execution --------------------------
  {
    code: "KubernetesOsRolloutPartial",
    area: "kubernetes-upgrade",
    retry: "wait",
    meaning:
      "An OS rollout on this cluster is partial in the journal (an operation still holds its scope, or a TalosUpgrade plan stopped part-way); a Kubernetes upgrade waits until it is finished and verified.",
  },
  {
    code: "KubernetesMixedTalosVersions",
    area: "kubernetes-upgrade",
    retry: "never",
    meaning:
      "The nodes run more than one Talos version; a Kubernetes upgrade is refused until the OS rollout is finished.",
  },
  {
    code: "KubernetesTalosVersionUnexpected",
    area: "kubernetes-upgrade",
    retry: "never",
    meaning: "Every node runs one Talos version, but not the one the plan was checked against.",
  },
  {
    code: "KubernetesSupportUnknown",
    area: "kubernetes-upgrade",
    retry: "never",
    meaning:
      "cairn's support matrix has no Kubernetes window for the Talos minor the nodes run; the plan holds.",
  },
  {
    code: "KubernetesStepInvalid",
    area: "kubernetes-upgrade",
    retry: "never",
    meaning:
      "The plan's Kubernetes step is not a patch or a one-minor step up (a downgrade or a skipped minor).",
  },
  {
    code: "KubernetesVersionUnexpected",
    area: "kubernetes-upgrade",
    retry: "never",
    meaning:
      "A component (static pod, kube-proxy or kubelet) runs another version than the plan's starting version.",
  },
  {
    code: "KubernetesSkewViolated",
    area: "kubernetes-upgrade",
    retry: "never",
    meaning: "The observed component versions break the Kubernetes version skew policy.",
  },
  {
    code: "KubernetesRemovedApiInUse",
    area: "kubernetes-upgrade",
    retry: "never",
    meaning:
      "The apiserver reports requests to an API that the target Kubernetes version removes; migrate the clients first.",
  },
  {
    code: "KubernetesEvidenceUnreadable",
    area: "kubernetes-upgrade",
    retry: "backoff",
    meaning:
      "A fact the Kubernetes upgrade depends on (a version, the inventory, managedFields, deprecated API requests) could not be read; the plan holds, nothing passes unread.",
  },
  {
    code: "BootstrapInventoryMissing",
    area: "kubernetes-upgrade",
    retry: "never",
    meaning:
      "The bootstrap manifest inventory ConfigMap is missing; it is left missing (never created on read) and the plan is refused.",
  },
  {
    code: "BootstrapOwnershipUnknown",
    area: "kubernetes-upgrade",
    retry: "never",
    meaning:
      "A bootstrap object's field ownership cannot be established (no managedFields, or none of the bootstrap manager); refused.",
  },
  {
    code: "BootstrapOwnershipOverlap",
    area: "kubernetes-upgrade",
    retry: "never",
    meaning:
      "A bootstrap object's field is owned by the bootstrap manager and by another manager (GitOps); the manifest sync would take it over, so the plan is refused, naming the object, the field and both managers.",
  },
  {
    code: "ComponentConfigUnreadable",
    area: "kubernetes-upgrade",
    retry: "backoff",
    meaning:
      "The node's machine configuration could not be read or does not name the component's image; nothing was sent.",
  },
  {
    code: "ComponentConfigStale",
    area: "kubernetes-upgrade",
    retry: "backoff",
    meaning:
      "Every read of the node's machine configuration answered a version older than one this plan's earlier change left (a lagging proxy or cache); a whole-document apply on it would undo that change, so nothing was sent.",
  },
  {
    code: "ComponentNotObserved",
    area: "kubernetes-upgrade",
    retry: "never",
    meaning:
      "After the configuration change, the component was not observed at the target version and ready by its verification deadline.",
  },
  {
    code: "ComponentVersionContradicted",
    area: "kubernetes-upgrade",
    retry: "never",
    meaning:
      "The completion read saw the component at another version, or not ready, at its deadline.",
  },
  {
    code: "KubeProxyOwnedElsewhere",
    area: "kubernetes-upgrade",
    retry: "never",
    meaning:
      "A field of kube-proxy's DaemonSet pod template is owned by a manager other than Talos's bootstrap manager and cairn (a GitOps controller); changing its image would take the field over, so the operation stops before the change, naming the field and the managers.",
  },
  {
    code: "KubeProxyUnreadable",
    area: "kubernetes-upgrade",
    retry: "backoff",
    meaning:
      "kube-proxy's DaemonSet could not be read (or does not exist) when its ownership was to be judged before its change; nothing was sent to it.",
  },
  {
    code: "KubeProxyChangeRefused",
    area: "kubernetes-upgrade",
    retry: "never",
    meaning:
      "The API server refused the change of kube-proxy's DaemonSet image before storing it: the DaemonSet moved since it was judged (409), is gone, or the change was invalid or forbidden.",
  },
  {
    code: "KubeProxyChangeLost",
    area: "kubernetes-upgrade",
    retry: "backoff",
    meaning:
      "The change of kube-proxy's DaemonSet image got no answer (timeout, 5xx, transport failure): whether it was stored is not known; the DaemonSet is observed, never assumed.",
  },

  // --- component upgrades: how an observed delivery ended -----------------------------------
  {
    code: "ComponentNotDelivered",
    area: "component",
    retry: "never",
    meaning:
      "By the ComponentUpgrade's deadline Flux had not delivered the merge: its source, release, or the Kustomization applying it from Git was not at the target (the merge commit, or a later one containing it) and Ready at its current generation.",
  },
  {
    code: "ComponentNotLanded",
    area: "component",
    retry: "never",
    meaning:
      "Flux delivered the ComponentUpgrade's target, but an operator-rendered workload the plan names still runs another image at the deadline (an operator that did not re-render rolls nothing).",
  },
  {
    code: "ComponentAfterMergeFailed",
    area: "component",
    retry: "never",
    meaning:
      "The ComponentUpgrade landed, but the last after-merge round of the bound health policy failed by the deadline.",
  },
  {
    code: "ComponentDeliveryUnreadable",
    area: "component",
    retry: "backoff",
    meaning:
      "The ComponentUpgrade's delivery or after-merge evidence could not be read by its deadline: neither completed nor failed.",
  },

  // --- playbooks: files ----------------------------------------------------------------------
  {
    code: "PlaybookTooLarge",
    area: "playbook",
    retry: "never",
    meaning: "A playbook file exceeds the size limit; it is refused before any byte is parsed.",
  },
  {
    code: "PlaybookSyntaxInvalid",
    area: "playbook",
    retry: "never",
    meaning:
      "A playbook file is not one well-formed YAML document in UTF-8 (syntax, control characters, duplicate keys, several documents).",
  },
  {
    code: "PlaybookAliasBudgetExceeded",
    area: "playbook",
    retry: "never",
    meaning: "YAML aliases in a playbook would expand beyond the allowed budget (alias bomb).",
  },
  {
    code: "PlaybookSchemaInvalid",
    area: "playbook",
    retry: "never",
    meaning:
      "A playbook field has the wrong type, is missing, is unknown, or has a value outside its allowed set.",
  },
  {
    code: "PlaybookSemanticInvalid",
    area: "playbook",
    retry: "never",
    meaning:
      "A playbook is inconsistent: an id used twice, a reference to an undefined pin, pin set, deviation or check, a selector that does not parse or compile.",
  },
  {
    code: "PlaybookSetInvalid",
    area: "playbook",
    retry: "never",
    meaning:
      "The playbook directory is inconsistent: a name differs from its file name or two files define one component.",
  },
  // --- operating beside the cluster: windows, freeze, breakpoints, hooks, alerts --------------
  {
    code: "MaintenanceWindowInvalid",
    area: "operating",
    retry: "never",
    meaning:
      "A maintenance window is malformed: its start is not five cron fields in range, its duration is not 1 to 10080 minutes, or its time zone is unknown.",
  },
  {
    code: "BreakpointInvalid",
    area: "operating",
    retry: "never",
    meaning:
      "A plan breakpoint follows a node the plan does not have, or its last node, or its name is declared twice.",
  },
  {
    code: "MaintenanceWindowClosed",
    area: "operating",
    retry: "wait",
    meaning:
      "No maintenance window is open: the next node is not committed until one opens (a committed step finishes or holds by the recovery rules).",
  },
  {
    code: "MaintenanceWindowTooShort",
    area: "operating",
    retry: "wait",
    meaning:
      "A window is open but less of it is left than the node step is expected to take: the node waits for the next window long enough for it.",
  },
  {
    code: "MachineFrozen",
    area: "operating",
    retry: "wait",
    meaning:
      "The machine's own scope gate is frozen (comparison 6): nothing is sent to it, an owed post hook included, until an approver unfreezes that machine; the rest of the cluster is not frozen by it.",
  },
  {
    code: "ClusterFrozen",
    area: "operating",
    retry: "wait",
    meaning:
      "The cluster is frozen (`cairn freeze`): no new node commitment until an approver unfreezes it.",
  },
  {
    code: "BreakpointHeld",
    area: "operating",
    retry: "wait",
    meaning:
      "The rollout reached a plan breakpoint and holds until a signed continuation for this plan digest and breakpoint arrives through git.",
  },
  {
    code: "ContinuationInvalid",
    area: "operating",
    retry: "wait",
    meaning:
      "A continuation file exists but does not name this plan digest and breakpoint, or no signature on it verifies under the trust root from an approver: the breakpoint keeps holding.",
  },
  {
    code: "HookFailed",
    area: "operating",
    retry: "never",
    meaning:
      "A node hook's Job was observed failed: the rollout holds (the post hook still runs when its pre hook was attempted).",
  },
  {
    code: "HookUnresolved",
    area: "operating",
    retry: "never",
    meaning:
      "A node hook's Job was not created or its completion could not be observed before its deadline: nothing proves it ran, the rollout holds.",
  },
  {
    code: "AlertFiring",
    area: "operating",
    retry: "wait",
    meaning:
      "A firing Alertmanager alert matches a vetoing binding of the health policy: the round fails (the alert's labels and start are the evidence).",
  },
  {
    code: "AlertmanagerUnreadable",
    area: "operating",
    retry: "backoff",
    meaning:
      "Alertmanager could not be read (unreachable, timed out, an answer that does not parse): unreadable, never a pass.",
  },
  {
    code: "SilenceNotCreated",
    area: "operating",
    retry: "backoff",
    meaning:
      "Alertmanager did not confirm the expected-noise silence of a node step; the step proceeds unsilenced (the alerts may page) and the report says so.",
  },
  {
    code: "SilenceNotRenewed",
    area: "operating",
    retry: "backoff",
    meaning:
      "Alertmanager did not confirm the renewal of an expected-noise silence; the step goes on, the next renewal tries again, and if none succeeds the silence lapses at its lease's end (the alerts page again).",
  },
  {
    code: "SilenceLapsed",
    area: "operating",
    retry: "never",
    meaning:
      "An expected-noise silence was found expired or gone before its step ended (its lease lapsed, or someone expired it); it is never revived, so the step's alerts page for the rest of the step.",
  },
  {
    code: "SilenceLeaseReleased",
    area: "operating",
    retry: "never",
    meaning:
      "The step that held an expected-noise silence is no longer run by this controller (taken over, or found after a restart): the silence is expired rather than renewed, so a held node's alerts page.",
  },
  {
    code: "StepStalled",
    area: "operating",
    retry: "wait",
    meaning:
      "A step has waited longer than its plan allows (a drain refused by a PDB, an unreadable binding, a node that does not come back); reported while it waits, naming the blocker.",
  },
  {
    code: "NotificationFailed",
    area: "operating",
    retry: "backoff",
    meaning:
      "A webhook notification was not accepted (unreachable, non-2xx); the rollout is not affected and the failure is logged.",
  },

  // --- playbooks: review of a bump ------------------------------------------------------------
  {
    code: "BundledVersionsInvalid",
    area: "review",
    retry: "never",
    meaning:
      "The bundled-versions snapshot (what an artifact bundles at a tag) is not valid: syntax, schema, or an artifact and tag listed twice.",
  },
  {
    code: "ReviewRefUnknown",
    area: "review",
    retry: "never",
    meaning:
      "A --base or --head revision does not name a commit of the repository (or the directory is not a git repository).",
  },
  {
    code: "PinSetPartial",
    area: "review",
    retry: "never",
    meaning:
      "The change moves some pins of a pin set and leaves others on the old version; the files that read the others would run another version.",
  },
  {
    code: "PinSetDisagrees",
    area: "review",
    retry: "never",
    meaning: "After the change the pins of one pin set carry different versions.",
  },
  {
    code: "DeviationDropped",
    area: "review",
    retry: "never",
    meaning:
      "A deliberate deviation the base commit has (a value, a block, a removal) is gone on the head commit.",
  },
  {
    code: "DeviationMissing",
    area: "review",
    retry: "never",
    meaning:
      "A deliberate deviation the playbook expects is absent on both commits; the change did not drop it, but the repository lacks it.",
  },
  {
    code: "CompanionMoves",
    area: "review",
    retry: "never",
    meaning:
      "A second, unpinned component rides along with a moved pin (a chart's bundled default, an artifact's contents): a two-component upgrade.",
  },
  {
    code: "CompanionMajorJump",
    area: "review",
    retry: "never",
    meaning: "A riding companion moves more majors than one upgrade may (Ceph: exactly one).",
  },
  {
    code: "CompanionVersionUnknown",
    area: "review",
    retry: "never",
    meaning:
      "The version a moved pin carries for a riding companion is not known (no bundled-versions entry, no pin in the repository); read it by hand.",
  },
  {
    code: "CompanionEditMissing",
    area: "review",
    retry: "never",
    meaning:
      "A pin set moved far enough to need an edit in the same change (a companion tool, a CRD pin) and that value did not change.",
  },
  {
    code: "ReviewFileUnreadable",
    area: "review",
    retry: "never",
    meaning:
      "A file the playbook judges cannot be read on one side (not YAML, too large, an alias bomb, a duplicate key, a pin not found); nothing about it is concluded.",
  },
  {
    code: "RollbackAcrossOneWay",
    area: "review",
    retry: "never",
    meaning:
      "The change moves a pin set back across a boundary the playbook says is one way (a minor or major that cannot be rolled back in place).",
  },
] as const satisfies readonly ReasonInfo[];

/** A stable reason code. */
export type Reason = (typeof REASONS)[number]["code"];

/** A reason code with its message and, when known, where: how reports, previews and the loop say why. */
export interface ReasonNote {
  readonly reason: Reason;
  readonly message: string;
  /** `file:line:column`, an object reference, or a node name. */
  readonly where?: string;
}

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
