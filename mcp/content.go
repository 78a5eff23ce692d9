package mcp

import "encoding/base64"

// Content is one item of a tool's result or a prompt's message: text,
// image, audio, an embedded resource or a resource link (Type says which).
type Content struct {
	Type        string            `json:"type"`
	Text        string            `json:"text,omitzero"`
	Data        string            `json:"data,omitzero"`     // image, audio: base64
	MimeType    string            `json:"mimeType,omitzero"` // image, audio, resource_link
	Resource    *ResourceContents `json:"resource,omitzero"` // resource (embedded)
	URI         string            `json:"uri,omitzero"`      // resource_link
	Name        string            `json:"name,omitzero"`     // resource_link
	Title       string            `json:"title,omitzero"`
	Description string            `json:"description,omitzero"`
	Annotations map[string]any    `json:"annotations,omitzero"`
	Meta        map[string]any    `json:"_meta,omitzero"`
}

// TextContent is a text item.
func TextContent(text string) Content { return Content{Type: "text", Text: text} }

// ImageContent is an image item of raw bytes.
func ImageContent(data []byte, mimeType string) Content {
	return Content{Type: "image", Data: base64.StdEncoding.EncodeToString(data), MimeType: mimeType}
}

// AudioContent is an audio item of raw bytes.
func AudioContent(data []byte, mimeType string) Content {
	return Content{Type: "audio", Data: base64.StdEncoding.EncodeToString(data), MimeType: mimeType}
}

// EmbeddedResource is an item carrying a resource's contents.
func EmbeddedResource(r ResourceContents) Content { return Content{Type: "resource", Resource: &r} }

// ResourceLink is an item pointing at a resource the client may read.
func ResourceLink(r Resource) Content {
	return Content{Type: "resource_link", URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MimeType: r.MimeType}
}

// ResourceContents is the contents of a resource: Text, or Blob (base64).
type ResourceContents struct {
	URI      string         `json:"uri"`
	MimeType string         `json:"mimeType,omitzero"`
	Text     string         `json:"text,omitzero"`
	Blob     string         `json:"blob,omitzero"`
	Meta     map[string]any `json:"_meta,omitzero"`
}

// TextResource is the text contents of uri.
func TextResource(uri, mimeType, text string) ResourceContents {
	return ResourceContents{URI: uri, MimeType: mimeType, Text: text}
}

// BlobResource is the binary contents of uri.
func BlobResource(uri, mimeType string, data []byte) ResourceContents {
	return ResourceContents{URI: uri, MimeType: mimeType, Blob: base64.StdEncoding.EncodeToString(data)}
}
