"""kbflow for the tools assistants are built with: LangChain and LlamaIndex retrievers over the
search API (kbflow[langchain], kbflow[llamaindex]), and the citation metadata that Dify's
External Knowledge API (flows/dify.py) and the MCP server (flows/mcp.py) return as well."""
