import { type Command, type CommandIO, EXIT, parseRegistryMirrors, UsageError } from "./command.ts";

async function run(args: Parameters<Command["run"]>[0], io: CommandIO): Promise<number> {
  const artifact = args.values["artifact"] as string | undefined;
  const chart = args.values["chart"] as string | undefined;
  const path = args.values["path"] as string | undefined;
  const tags = (args.values["tag"] as string[] | undefined) ?? [];
  const file = args.values["file"] as string | undefined;
  const layerMediaType = args.values["layer-media-type"] as string | undefined;
  if (!artifact || !chart || tags.length === 0 || (!path && !file)) {
    throw new UsageError(
      "--artifact, --chart, at least one --tag, and --path or --file (or both) are required",
    );
  }
  if (!/^(oci:\/\/)?[A-Za-z0-9.-]+(:\d+)?\/[a-z0-9._\/-]+$/.test(chart)) {
    throw new UsageError(`--chart wants oci://HOST/REPOSITORY, got ${chart}`);
  }
  const date = (args.values["date"] as string | undefined) ??
    new Date().toISOString().slice(0, 10);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) {
    throw new UsageError(`--date wants YYYY-MM-DD, got ${date}`);
  }
  const capture = args.values["capture"] as string | undefined;
  const { bundledFromChart } = await import("../app/bundled_chart_run.ts");
  const text = await bundledFromChart({
    artifact,
    chart,
    tags,
    ...(path !== undefined ? { path } : {}),
    ...(file !== undefined ? { file } : {}),
    ...(layerMediaType !== undefined ? { layerMediaType } : {}),
    ...(capture !== undefined ? { capture } : {}),
    date,
    registry: {
      mirrors: parseRegistryMirrors(args.values["registry-mirror"]),
      signal: io.signal,
    },
  });
  io.stdout(text);
  return EXIT.ok;
}

export const command: Command = {
  path: ["bundled", "chart"],
  summary: "Read what a Helm chart bundles at each tag into a bundled-versions snapshot",
  usage:
    "--artifact NAME --chart oci://HOST/REPO --tag T... (--path YAML_PATH | --file F) [--capture RE] [--registry-mirror H=URL]",
  help: `
Pulls the chart at each --tag from its OCI registry (the chart layer checked against its
digest, size-capped before and after decompression), reads its bundled values.yaml and prints a
bundled-versions snapshot (kind BundledVersions) with one entry per tag: the value at --path
(narrowed by --capture's first group), where it was read, and the layer digest. This is how a
review knows the companion a chart carries unpinned, e.g. the Ceph image of rook-ceph-cluster:

  cairn bundled chart --artifact rook-ceph-cluster --chart oci://ghcr.io/rook/rook-ceph-cluster \\
    --tag v1.19.3 --tag v1.20.0 --path cephClusterSpec.cephVersion.image --capture ':(v[0-9.]+)'

Any other tar+gzip OCI artifact works the same with --layer-media-type and --file, e.g. the Flux
distribution a flux-operator-manifests tag carries (--file flux-images/VERSION, no --path: the
file's text is the value, narrowed by --capture). A tag whose artifact or value cannot be read
fails the command; nothing is guessed. Versions compiled into code (cephcsi in
ceph-csi-operator) cannot be read this way.

Options:
  --artifact NAME        the snapshot key playbooks use (companions' version.artifact)
  --chart oci://H/R      the chart repository
  --tag T                a chart tag (repeatable)
  --path P               the YAML path inside values.yaml (or inside --file)
  --file F               read this file of the archive instead of the chart's values.yaml
  --layer-media-type T   the tar+gzip layer to read (default the Helm chart content layer)
  --capture RE           narrow the value to RE's first capture group
  --date YYYY-MM-DD      the snapshot's date (default today)
  --registry-mirror H=URL  fetch references naming registry host H from URL (repeatable)
`,
  options: {
    artifact: { type: "string" },
    chart: { type: "string" },
    tag: { type: "string", multiple: true },
    path: { type: "string" },
    file: { type: "string" },
    "layer-media-type": { type: "string" },
    capture: { type: "string" },
    date: { type: "string" },
    "registry-mirror": { type: "string", multiple: true },
  },
  run,
};
