import { compileCel } from "./cel.ts";
import { type ParseHealthPolicyResult, parseHealthPolicyStructure } from "./policy_structure.ts";

export {
  type HealthPolicy,
  healthPolicyDigest,
  kubeObjectCheck,
  type ParseHealthPolicyResult,
} from "./policy_structure.ts";

/**
 * Parses and validates a health policy file, CEL predicates included. Every problem carries a
 * `file:line:column`, the field path and a stable reason (`HealthPolicySyntaxInvalid` or
 * `HealthPolicyInvalid`).
 */
export function parseHealthPolicy(text: string, file: string): ParseHealthPolicyResult {
  return parseHealthPolicyStructure(text, file, compileCel);
}
