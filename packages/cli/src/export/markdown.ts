/**
 * Markdown of a session (the model's answers, the user's prompts) as HTML for the session view
 * (`html.ts`), with `marked`. The text comes from a model and from whatever it read, so nothing
 * in it may become markup of its own: raw HTML in the markdown is shown as text, a link keeps
 * its target only for `http:`, `https:` and `mailto:` (anything else — `javascript:`, `data:` —
 * is shown as its text alone), and an image becomes a link to it (the page's CSP loads no image
 * that is not embedded). Every other tag is one `marked` writes itself, around text it escaped.
 */
import { Marked, type Tokens } from "marked";

const SAFE_URL = /^(https?:|mailto:)/i;

const marked = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    html: ({ text }: Tokens.HTML | Tokens.Tag) => escapeHtml(text),
    link(this: { parser: { parseInline(tokens: Tokens.Generic[]): string } }, { href, title, tokens }: Tokens.Link) {
      const text = this.parser.parseInline(tokens);
      if (!SAFE_URL.test(href.trim())) return text;
      return `<a href="${escapeHtml(href)}"${title ? ` title="${escapeHtml(title)}"` : ""} rel="noopener noreferrer nofollow">${text}</a>`;
    },
    image({ href, text }: Tokens.Image) {
      const alt = escapeHtml(text || "image");
      return SAFE_URL.test(href.trim())
        ? `<a href="${escapeHtml(href)}" rel="noopener noreferrer nofollow">[${alt}]</a>`
        : `[${alt}]`;
    },
  },
});

/** The markdown `text` as HTML, safe to put inside an element. */
export function markdownHtml(text: string): string {
  return marked.parse(text, { async: false });
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
