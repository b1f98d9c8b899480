/**
 * zod as cairn's schemas use it. Every schema validates a file (a plan, a health policy, a
 * catalogue, the configuration, a playbook, an evidence manifest): a process parses each a handful
 * of times, never once per watch event. zod compiles a specialised parser (`new Function`) for an
 * object schema on its first parse, which pays off only over many parses; in a one-shot command
 * it cost more than it saved (about 15 ms of a cold `cairn plan check`, bench/plan_check_bench.ts).
 * The interpreted parsers decide the same.
 */
import { config, z } from "zod";

config({ jitless: true });

export { z };
