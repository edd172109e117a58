/** Text and attribute values of the XML parts of a workbook, entities decoded. */

const XML_ENTITY = /&(amp|lt|gt|quot|apos|#x[0-9a-fA-F]+|#\d+);/g;

/** A character reference's character; the reference as written when it names no character. */
function character(ref: string, code: number): string {
  return code <= 0x10ffff ? String.fromCodePoint(code) : ref;
}

/** `s` with the five XML entities and character references decoded (anything else left as written). */
export const decodeXml = (s: string): string =>
  !s.includes('&')
    ? s
    : s.replace(XML_ENTITY, (ref, e: string) =>
        e === 'amp'
          ? '&'
          : e === 'lt'
            ? '<'
            : e === 'gt'
              ? '>'
              : e === 'quot'
                ? '"'
                : e === 'apos'
                  ? "'"
                  : character(ref, e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10)),
      );

/** The decoded value of attribute `name` (double-quoted) of an opening tag's text; null when absent. */
export const attr = (tag: string, name: string): string | null => {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return m ? decodeXml(m[1]!) : null;
};
