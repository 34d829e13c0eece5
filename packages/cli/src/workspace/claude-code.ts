/**
 * When the shipped `claude-code` extension switches on by itself (docs/claude-code.md): the
 * extension's own `triggers.ts`, which reads nothing but small JSON files with Node's modules.
 */
export {
  claudeCodeTriggers,
  claudeProjectHookFiles,
  type ClaudeCodeTriggers,
} from "@mypi/extensions/claude-code/triggers";
