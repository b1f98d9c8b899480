/**
 * Webhook notifications (docs/operating.md#notifications): what cairn tells a chat or an incident
 * tool, and the payload shapes it is told in. Pure: an event in, a JSON body out. Generic JSON
 * carries every field; the Slack shape is an incoming-webhook `{text}`; the Matrix shape is an
 * `m.room.message` content `{msgtype: "m.text", body}` (what a Matrix webhook bridge posts).
 */

/** The moments cairn notifies of. */
export const NOTIFICATION_EVENTS = [
  "preview-ready",
  "execution-start",
  "hold",
  "stall",
  "unresolved",
  "completed",
] as const;

export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

/** One notification. Strings come from plans and the cluster; receivers render them as text. */
export interface Notification {
  readonly event: NotificationEvent;
  readonly plan: string;
  readonly digest: string;
  readonly cluster?: string;
  readonly node?: string;
  /** A reason code when there is one (`MaintenanceWindowClosed`, `StepStalled`, `HookFailed`). */
  readonly reason?: string;
  /** One line, already free of secrets. */
  readonly text: string;
  readonly atMs: number;
}

/** The payload formats a target may ask for. */
export type NotificationFormat = "json" | "slack" | "matrix";

const HEADLINE: Readonly<Record<NotificationEvent, string>> = {
  "preview-ready": "preview ready",
  "execution-start": "execution started",
  hold: "held",
  stall: "stalled",
  unresolved: "UNRESOLVED",
  completed: "completed",
};

/** `cairn: plan talos-v1.14.2 held on worker-2 (MaintenanceWindowClosed): …` */
export function notificationLine(n: Notification): string {
  const where = n.node ? ` on ${n.node}` : "";
  const why = n.reason ? ` (${n.reason})` : "";
  return `cairn: plan ${n.plan} ${HEADLINE[n.event]}${where}${why}: ${n.text}`;
}

/** The body posted for `n` in `format`. */
export function notificationPayload(n: Notification, format: NotificationFormat): unknown {
  switch (format) {
    case "json":
      return {
        source: "cairn",
        event: n.event,
        plan: n.plan,
        digest: n.digest,
        ...(n.cluster ? { cluster: n.cluster } : {}),
        ...(n.node ? { node: n.node } : {}),
        ...(n.reason ? { reason: n.reason } : {}),
        text: n.text,
        at: new Date(n.atMs).toISOString(),
      };
    case "slack":
      // Slack escapes only &, < and >: anything else in `text` is shown as written.
      return {
        text: notificationLine(n).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(
          />/g,
          "&gt;",
        ),
      };
    case "matrix":
      return { msgtype: "m.text", body: notificationLine(n) };
  }
}
