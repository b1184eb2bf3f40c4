// class-validator keeps its decorators' metadata in one storage that its index does not export;
// the compiled check (common/compiled-validation.ts) reads it as ValidationPipe's own binary-value
// check does. The package has no "exports" map, so its CommonJS file is importable by path.
declare module 'class-validator/cjs/metadata/MetadataStorage' {
  export {
    getMetadataStorage,
    MetadataStorage,
  } from 'class-validator/types/metadata/MetadataStorage';
}
