// `import Relate` brings the connection layer too: a context's connection and errors are
// its types.
@_exported import RelatePostgres
