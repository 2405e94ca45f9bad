/** A GUID's 36 characters (either case), for building patterns. */
export const GUID_TEXT = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';

/** A GUID as Windows writes it, with or without braces; group 1 is the 36 characters. */
export const GUID_PATTERN = new RegExp(`^\\{?(${GUID_TEXT})\\}?$`);

/**
 * Random GUIDs (UUID v4) for the ids a create chooses in advance. They must be unique, not secret, so they come from
 * Math.random (seeded per process by V8 from the OS): loading node:crypto would cost every plugin start several ms.
 */
export function newGuid(): string {
  const hex: string[] = [];
  for (let i = 0; i < 4; i++)
    hex.push(
      Math.floor(Math.random() * 2 ** 32)
        .toString(16)
        .padStart(8, '0'),
    );
  const h = hex.join('');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
