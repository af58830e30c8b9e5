-- Headless Neovim (0.7+) as the LSP client of `reclass-ng lsp`: opens one file, waits for its
-- diagnostics, asks hover and definition at given positions, writes what it got as JSON.
-- Everything comes from the environment (tests/lsp/test_neovim.py).
local env = vim.env
local file = env.RECLASS_LSP_FILE
local uri = vim.uri_from_fname(file)
local result = {}
local diagnosed = false

local client_id = vim.lsp.start_client({
  cmd = vim.fn.json_decode(env.RECLASS_LSP_CMD),
  root_dir = env.RECLASS_LSP_ROOT,
  handlers = {
    ["textDocument/publishDiagnostics"] = function(_, params)
      if params.uri == uri then
        result.diagnostics = params.diagnostics
        diagnosed = true
      end
    end,
  },
})

vim.cmd("edit " .. vim.fn.fnameescape(file))
local bufnr = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(bufnr, client_id)
result.diagnosed = vim.wait(60000, function() return diagnosed end, 50)

local client = vim.lsp.get_client_by_id(client_id)
local function ask(method, line, character)
  local answer = client.request_sync(method, {
    textDocument = { uri = uri },
    position = { line = tonumber(line), character = tonumber(character) },
  }, 30000, bufnr)
  return answer and answer.result or vim.NIL
end
result.hover = ask("textDocument/hover", env.RECLASS_LSP_HOVER_LINE, env.RECLASS_LSP_HOVER_CHAR)
result.definition = ask("textDocument/definition", env.RECLASS_LSP_DEF_LINE,
                        env.RECLASS_LSP_DEF_CHAR)
vim.fn.writefile({ vim.fn.json_encode(result) }, env.RECLASS_LSP_OUT)
client.stop()
vim.wait(5000, function() return client.is_stopped() end, 50)
vim.cmd("qa!")
