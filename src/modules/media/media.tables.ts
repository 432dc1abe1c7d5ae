export interface MediaTables {
  /** Resized product images and the logo, by content-hashed name (docs/storefront.md, 'Images'). */
  media: { name: string; content_type: string; bytes: Buffer; created_at: string };
}
