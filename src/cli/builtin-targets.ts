/** Registers the targets compiled into this build. Imported once, for its side effect, by main. */
export {};
