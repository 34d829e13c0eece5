/**
 * The session's model and thinking level as ACP session configuration options (the stable way
 * ACP v1 lets a client switch models: `session/set_config_option`, category `model` and
 * `thought_level`), answered from mypi's model registry and the session's choice
 * (docs/models.md). A change from anywhere else — an extension's `pi.setModel`, a level clamped
 * by a model change — is told with `config_option_update`.
 */
import { RequestError, type SessionConfigOption } from "@agentclientprotocol/sdk";
import type { ModelSelection } from "@mypi/extension-api";

const MODEL_OPTION = "model";
const THINKING_OPTION = "thought_level";

/** The options of a session whose host has a registry; none without one (a bare agent). */
export function configOptions(models: ModelSelection | undefined): SessionConfigOption[] {
  if (!models) return [];
  const current = models.entry ? `${models.entry.provider}/${models.entry.id}` : models.client.id;
  const listed = models.registry
    .available()
    .map((m) => ({ value: `${m.provider}/${m.id}`, name: m.name, description: m.provider }));
  // A model the registry does not describe (scripted:, a custom client) stays choosable while it is in use.
  const choices = listed.some((m) => m.value === current) ? listed : [{ value: current, name: current }, ...listed];
  const options: SessionConfigOption[] = [
    { type: "select", id: MODEL_OPTION, name: "Model", category: "model", currentValue: current, options: choices },
  ];
  const levels = models.availableThinkingLevels();
  if (levels.length > 1) {
    options.push({
      type: "select",
      id: THINKING_OPTION,
      name: "Thinking",
      category: "thought_level",
      currentValue: models.thinkingLevel,
      options: levels.map((l) => ({ value: l, name: l })),
    });
  }
  return options;
}

/** `session/set_config_option`: switch the model or the level; the error names what is allowed. */
export function setConfigOption(models: ModelSelection | undefined, configId: string, value: unknown): void {
  if (!models) throw RequestError.invalidParams({ configId }, "this session has no configuration options");
  if (typeof value !== "string")
    throw RequestError.invalidParams({ configId }, `"${configId}" takes one of its listed values (a string)`);
  if (configId === MODEL_OPTION) {
    const current = models.entry ? `${models.entry.provider}/${models.entry.id}` : models.client.id;
    if (value === current) return;
    const at = value.indexOf("/");
    const entry = at > 0 ? models.registry.find(value.slice(0, at), value.slice(at + 1)) : undefined;
    if (!entry || !models.registry.available().some((m) => m.provider === entry.provider && m.id === entry.id))
      throw RequestError.invalidParams(
        { configId, value },
        `unknown model "${value}": choose one of the option's values (\`mypi models\` lists them)`,
      );
    const problem = models.select(entry, { source: "set" });
    if (problem !== undefined) throw RequestError.invalidParams({ configId, value }, problem);
    return;
  }
  if (configId === THINKING_OPTION) {
    const levels = models.availableThinkingLevels();
    if (!(levels as readonly string[]).includes(value))
      throw RequestError.invalidParams(
        { configId, value },
        `unknown thinking level "${value}": one of ${levels.join(", ")}`,
      );
    models.setThinkingLevel(value);
    return;
  }
  throw RequestError.invalidParams(
    { configId },
    `unknown configuration option "${configId}": this session has ${configOptions(models)
      .map((o) => o.id)
      .join(", ")}`,
  );
}
