/** `cairn image resolve`: an installer reference to its manifest digest for one platform. */
import { type Command, EXIT, OUTPUT_OPTION, printJson, UsageError, wantsJson } from "./command.ts";
import { parsePlatform } from "../domain/oci/reference.ts";
import { resolveInstallerImage } from "../app/image_resolve_run.ts";

export const command: Command = {
  path: ["image", "resolve"],
  summary: "Resolve an image reference to its manifest digest for one platform",
  usage: "REF --platform OS/ARCH[/VARIANT] [--insecure-http] [--output json]",
  help: `
Resolves REF (host/repository:tag or host/repository[:tag]@sha256:…) through the OCI
distribution API: manifest lists and OCI indexes are narrowed to the requested platform,
bearer-token auth is followed, and every manifest's bytes are checked against its digest.
A missing tag, repository or platform is an error; no tag, platform or default image is
substituted.

  --platform P      os/architecture[/variant], e.g. linux/amd64 (required)
  --insecure-http   use plain HTTP (only for loopback registries, e.g. in tests)
  --output json     print the resolution as JSON

Reasons: ImageReferenceInvalid, ImageNotFound, ImagePlatformMissing, RegistryUnreadable,
DigestMismatch.`,
  options: {
    platform: { type: "string" },
    "insecure-http": { type: "boolean", default: false },
    ...OUTPUT_OPTION,
  },
  positionals: { min: 1, max: 1 },
  async run(args, io) {
    const platformFlag = args.values["platform"];
    if (typeof platformFlag !== "string") throw new UsageError("--platform is required");
    const resolved = await resolveInstallerImage(
      args.positionals[0]!,
      parsePlatform(platformFlag),
      {
        insecureHttp: args.values["insecure-http"] === true,
        signal: io.signal,
      },
    );
    if (wantsJson(args)) printJson(io, resolved);
    else {
      io.stdout(
        `${resolved.pinned}\n  platform ${resolved.platform}  media type ${resolved.mediaType}` +
          `${resolved.indexDigest ? `\n  from index ${resolved.indexDigest}` : ""}\n`,
      );
    }
    return EXIT.ok;
  },
};
