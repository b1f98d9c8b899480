/** Where notifications go (docs/operating.md#notifications). Never throws, never blocks a step. */
import type { Notification } from "../domain/ops/notification.ts";

export interface Notifier {
  /** Sends `n` to every configured target; a failure is logged, never thrown. */
  notify(n: Notification): Promise<void>;
}
