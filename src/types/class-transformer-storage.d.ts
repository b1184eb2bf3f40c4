// class-transformer keeps its decorators' metadata in one storage that its index does not export;
// the compiled transform (common/compiled-transform.ts) reads it to plan each class once. The
// package has no "exports" map, so its CommonJS files are importable by path.
declare module 'class-transformer/cjs/storage' {
  export { defaultMetadataStorage } from 'class-transformer/types/storage';
}
declare module 'class-transformer/cjs/enums' {
  export { TransformationType } from 'class-transformer/types/enums';
}
