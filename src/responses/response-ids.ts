/**
 * Ids of the Responses door. An output item's id names its response (`msg_<r>_0` belongs to `resp_<r>`), so
 * an `item_reference` is found with one lookup of the response that holds it, without a table of items.
 */
export const RESPONSE_ID_PREFIX = 'resp_';

export type ItemKind = 'msg' | 'fc' | 'rs';

export function itemId(responseId: string, kind: ItemKind, index: number): string {
  return `${kind}_${responseId.slice(RESPONSE_ID_PREFIX.length)}_${index}`;
}

const ITEM_ID = /^(msg|fc|rs)_([A-Za-z0-9]+)_(\d+)$/;

/** The response an item id of this gateway belongs to, or null for an id the gateway did not give. */
export function responseOfItem(id: string): string | null {
  const match = ITEM_ID.exec(id);
  return match === null ? null : `${RESPONSE_ID_PREFIX}${match[2] as string}`;
}
