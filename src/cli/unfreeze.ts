import { freezeCommand } from "./freeze_common.ts";

export const command = freezeCommand(false);
