/** Length of a node id in hex characters (128 bits). */
export const NODE_ID_HEX_LENGTH = 32;
