/**
 * Webhook notifications over HTTP POST: each configured target gets the payload in its format
 * (`domain/ops/notification.ts`), with a deadline. A target that refuses, times out or is down is
 * logged (`NotificationFailed`) and skipped: a notification never holds or fails a rollout.
 * Target URLs may carry a token in their path (Slack's do), so they are never logged whole.
 */
import {
  type Notification,
  type NotificationFormat,
  notificationPayload,
} from "../../domain/ops/notification.ts";
import type { Logger } from "../../ports/logger.ts";
import type { Notifier } from "../../ports/notifier.ts";

export interface WebhookTarget {
  readonly url: string;
  readonly format: NotificationFormat;
}

const TIMEOUT_MS = 10_000;

export class WebhookNotifier implements Notifier {
  constructor(
    private readonly targets: readonly WebhookTarget[],
    private readonly log: Logger,
    private readonly fetchFn: typeof fetch = fetch,
  ) {}

  async notify(n: Notification): Promise<void> {
    await Promise.all(this.targets.map(async (t) => {
      const host = new URL(t.url).host;
      try {
        const res = await this.fetchFn(t.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(notificationPayload(n, t.format)),
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
        await res.body?.cancel();
        if (!res.ok) {
          this.log.warn("notification not accepted", {
            reason: "NotificationFailed",
            error: `HTTP ${res.status} from ${host}`,
          });
        }
      } catch (e) {
        this.log.warn("notification not sent", {
          reason: "NotificationFailed",
          error: `${host}: ${e instanceof Error ? e.name : "error"}`,
        });
      }
    }));
  }
}
