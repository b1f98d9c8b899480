/**
 * `cairn bundled chart` wiring: each tag's chart read from its OCI registry
 * (`adapters/oci/chart_values.ts`), the value at a path of its bundled `values.yaml` selected as
 * playbooks select values (`domain/playbook/select.ts`), and the entries written as a
 * bundled-versions snapshot. A tag whose chart or value cannot be read fails the command: a
 * snapshot never lists a guess.
 */
import { stringify } from "yaml";
import { readArtifactFile } from "../adapters/oci/chart_values.ts";
import type { RegistryClientOptions } from "../adapters/oci/registry_client.ts";
import { CairnError } from "../domain/errors.ts";
import { parseBundledVersions } from "../domain/playbook/bundled.ts";
import { selectValue } from "../domain/playbook/select.ts";
import { compileCapture, parseYamlPath } from "../domain/playbook/yaml_path.ts";

export interface BundledChartOptions {
  readonly artifact: string;
  readonly chart: string;
  readonly tags: readonly string[];
  /** A YAML path inside the file; absent: the whole file's text (trimmed) is the value. */
  readonly path?: string;
  readonly capture?: string;
  /** Another file than the chart's values.yaml (a path inside the archive). */
  readonly file?: string;
  readonly layerMediaType?: string;
  readonly date: string;
  readonly registry: Pick<RegistryClientOptions, "mirrors" | "insecureHttp" | "signal" | "fetch">;
}

/** The snapshot text for `tags` of `chart` (checked by the snapshot parser before it is returned). */
export async function bundledFromChart(o: BundledChartOptions): Promise<string> {
  const steps = o.path === undefined ? [] : parseYamlPath(o.path);
  if (typeof steps === "string") {
    throw new CairnError({ reason: "ConfigInvalid", message: `--path ${o.path}: ${steps}` });
  }
  if (o.capture !== undefined) {
    const re = compileCapture(o.capture);
    if (typeof re === "string") {
      throw new CairnError({ reason: "ConfigInvalid", message: `--capture: ${re}` });
    }
  }
  const entries = [];
  for (const tag of o.tags) {
    const values = await readArtifactFile(o.chart, tag, {
      ...(o.file !== undefined ? { file: o.file } : {}),
      ...(o.layerMediaType !== undefined ? { layerMediaType: o.layerMediaType } : {}),
    }, o.registry);
    const got = o.path !== undefined
      ? selectValue(values.text, {
        yaml: o.path,
        ...(o.capture !== undefined ? { capture: o.capture } : {}),
      })
      : selectValue(values.text, { pattern: o.capture ?? "^\\s*(\\S+)\\s*$" });
    if (got.kind !== "found" || got.text === undefined) {
      throw new CairnError({
        reason: "RegistryUnreadable",
        message: `${values.reference}: ${values.path} ${
          got.kind === "found" ? `${o.path ?? "the file"} is not a scalar` : got.why
        }; nothing is written for a value that was not read`,
      });
    }
    entries.push({
      artifact: o.artifact,
      tag,
      version: got.text,
      source:
        `${values.path} ${o.path} (line ${got.at.line}) of ${o.chart} layer ${values.layerDigest}`,
    });
  }
  const text = `# Read from the charts by cairn bundled chart.\n${
    stringify({
      apiVersion: "cairn.dev/v1alpha1",
      kind: "BundledVersions",
      metadata: { name: o.artifact, date: o.date },
      spec: { entries },
    }, { lineWidth: 0 })
  }`;
  const check = parseBundledVersions(new TextEncoder().encode(text), "(generated)");
  if (!check.ok) throw new CairnError(check.problems[0]!);
  return text;
}
