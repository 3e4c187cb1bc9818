// Types of readme-section.mjs, for the tests that import it.
export const ROOT: string;
export const SECTIONS: Record<string, string>;
export function sectionBody(name: string, file: string): string;
export function replaceSection(readme: string, name: string, body: string): string;
export function generateReadme(readme: string, sections?: Record<string, string>): string;
export const SECTION_PAGES: Record<string, string[]>;
export function sectionsOf(page: string, sections?: Record<string, string>): Record<string, string>;
