/**
 * A breakpoint continuation: the exact text an approver signs (SSHSIG, namespace
 * `cairn-continuation`) to let a rollout past one breakpoint of one plan. It names the plan by
 * digest, so a continuation can never carry over to an edited plan, and the breakpoint by name, so
 * one continuation opens one breakpoint. It lives in the watched repository at
 * {@link continuationPath}, its signatures beside it in `<path>.sig`.
 */

/** The SSHSIG namespace of continuations (never a plan signature's). */
export const CONTINUATION_NAMESPACE = "cairn-continuation";

/** The bytes a continuation of `breakpoint` of the plan `digest` must hold, exactly. */
export function continuationText(digest: string, breakpoint: string): string {
  return `cairn-continuation v1\nplan ${digest}\nbreakpoint ${breakpoint}\n`;
}

/** Repository-relative path of the continuation of `breakpoint` of plan `planName`. */
export function continuationPath(planName: string, breakpoint: string): string {
  return `continuations/${planName}/${breakpoint}`;
}
